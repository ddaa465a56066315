package tools_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

// withPlatformAgents adds one Vapi agent per secret variable to the demo
// catalog.
func withPlatformAgents(envs ...string) []byte {
	var agents strings.Builder
	agents.WriteString("agents:\n")
	for i, env := range envs {
		fmt.Fprintf(&agents, "  - id: phone-%d\n    api_key_sha256: %s\n    allow: [send_sms]\n"+
			"    platform:\n      kind: vapi\n      secret_env: %s\n", i+1, tools.HashKey(fmt.Sprintf("phone-%d-key", i+1)), env)
	}
	return []byte(strings.Replace(string(tools.DemoCatalogYAML), "agents:\n", agents.String(), 1))
}

// Two agents naming one platform secret would accept each other's signed
// requests: the catalog is refused, naming both agents.
func TestTwoAgentsCannotShareAPlatformSecret(t *testing.T) {
	t.Parallel()
	_, err := tools.Load(withPlatformAgents("PHONE_ONE_SECRET", "PHONE_TWO_SECRET"))
	require.NoError(t, err)

	_, err = tools.Load(withPlatformAgents("PHONE_SECRET", "PHONE_SECRET"))
	require.Error(t, err)
	var found bool
	for _, p := range fieldErrors(err) {
		if p.Row == `agents[1] "phone-2"` && p.Field == "platform.secret_env" {
			require.Contains(t, p.Problem, `PHONE_SECRET is also agent "phone-1"'s platform secret`)
			require.Contains(t, p.Problem, `agents "phone-1" and "phone-2"`)
			found = true
		}
	}
	require.True(t, found, "refusal names the second agent's secret_env: %v", err)
}
