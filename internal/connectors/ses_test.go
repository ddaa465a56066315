package connectors

import (
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"
)

// TestSESUsesStaticKeysWhenBothAreSet: static keys, with the session token
// of temporary credentials, are used as given.
func TestSESUsesStaticKeysWhenBothAreSet(t *testing.T) {
	t.Parallel()
	cfg := SESConfig{Region: "eu-west-1", AccessKeyID: "AKIDSTATIC", SecretAccessKey: "static-secret", SessionToken: "static-token", From: "a@example.com"}
	provider, err := cfg.credentials(t.Context())
	require.NoError(t, err)
	require.IsType(t, credentials.StaticCredentialsProvider{}, provider)
	creds, err := provider.Retrieve(t.Context())
	require.NoError(t, err)
	require.Equal(t, "AKIDSTATIC", creds.AccessKeyID)
	require.Equal(t, "static-secret", creds.SecretAccessKey)
	require.Equal(t, "static-token", creds.SessionToken)
}

// TestSESFallsBackToTheDefaultCredentialChain: without static keys the
// AWS default chain answers, here from its environment source (a role's
// would answer the same way on an instance or in a task); no request
// leaves the machine.
func TestSESFallsBackToTheDefaultCredentialChain(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", missing)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", missing)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDCHAIN")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "chain-secret")
	t.Setenv("AWS_SESSION_TOKEN", "chain-token")

	cfg := SESConfig{Region: "eu-west-1", From: "a@example.com"}
	require.NoError(t, cfg.validate())
	provider, err := cfg.credentials(t.Context())
	require.NoError(t, err)
	_, static := provider.(credentials.StaticCredentialsProvider)
	require.False(t, static, "no static keys were given")
	creds, err := provider.Retrieve(t.Context())
	require.NoError(t, err)
	require.Equal(t, "AKIDCHAIN", creds.AccessKeyID)
	require.Equal(t, "chain-secret", creds.SecretAccessKey)
	require.Equal(t, "chain-token", creds.SessionToken)
	require.Equal(t, config.CredentialsSourceName, creds.Source)

	_, err = NewSES(cfg)
	require.NoError(t, err, "a connector without static keys is built on the chain")
}

// TestSESRefusesHalfAStaticKey: a key ID without its secret, or a session
// token without either, is a mistake, not a request for the default chain.
func TestSESRefusesHalfAStaticKey(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cfg  SESConfig
		want string
	}{
		"key ID only": {SESConfig{AccessKeyID: "AKID", From: "a@example.com"}, "set both the access key ID and the secret access key, or neither"},
		"secret only": {SESConfig{SecretAccessKey: "s", From: "a@example.com"}, "set both the access key ID and the secret access key, or neither"},
		"token only":  {SESConfig{SessionToken: "t", From: "a@example.com"}, "a session token needs the access key ID and secret access key"},
		"no sender":   {SESConfig{Region: "eu-west-1"}, "a From address is required"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := NewSES(tc.cfg)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
