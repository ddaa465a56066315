package warm

import (
	_ "github.com/aws/aws-sdk-go-v2/credentials"
	_ "github.com/aws/aws-sdk-go-v2/service/sesv2"
	_ "github.com/compose-spec/compose-go/v2/loader"
	_ "github.com/google/cel-go/cel"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/spf13/cobra"
	_ "github.com/stretchr/testify/require"
	_ "github.com/twilio/twilio-go"
	_ "go.temporal.io/sdk/client"
	_ "go.temporal.io/sdk/testsuite"
	_ "go.temporal.io/sdk/worker"
	_ "go.temporal.io/server/schema/sqlite"
	_ "go.temporal.io/server/temporal"
	_ "go.temporal.io/server/temporaltest"
	_ "gopkg.in/yaml.v3"
	_ "modernc.org/sqlite"
)
