package platform_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/platform"
	"github.com/maestro-run/maestro/tools"
)

// exportTools loads the demo catalog with a platform block on its voice
// agent and returns the exported tool definitions, by tool name.
func exportTools(t *testing.T, block string) map[string]map[string]any {
	t.Helper()
	cat, err := tools.Load([]byte(strings.Replace(string(tools.DemoCatalogYAML), "    on_failure: none\n",
		"    on_failure: none\n    platform:\n"+block, 1)))
	require.NoError(t, err)
	agent, ok := cat.Agent("voice-agent")
	require.True(t, ok)
	out, err := platform.Export(cat, agent, "https://maestro.example")
	require.NoError(t, err)
	require.NotEmpty(t, out.Tools)
	defs := map[string]map[string]any{}
	for _, raw := range out.Tools {
		var def map[string]any
		require.NoError(t, json.Unmarshal(raw, &def))
		name, _ := def["name"].(string)
		defs[name] = def
	}
	return defs
}

// An ElevenLabs tool blocks the turn by default, with a timeout of the
// budget plus the margin; with async_tools it runs async, with the longer
// budget's timeout, within ElevenLabs' 120 s.
func TestExportElevenLabsExecutionMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		block   string
		mode    string
		timeout float64
	}{
		{"      kind: elevenlabs\n      secret_env: EL\n", "immediate", 25},
		{"      kind: elevenlabs\n      secret_env: EL\n      answer_budget: 115s\n", "immediate", 120},
		{"      kind: elevenlabs\n      secret_env: EL\n      async_tools: true\n", "async", 120},
		{"      kind: elevenlabs\n      secret_env: EL\n      async_tools: true\n      async_budget: 60s\n", "async", 65},
	} {
		defs := exportTools(t, tc.block)
		def := defs["send_sms"]
		require.NotNil(t, def, "%v", defs)
		require.Equal(t, "webhook", def["type"])
		require.Equal(t, tc.mode, def["execution_mode"], tc.block)
		require.Equal(t, tc.timeout, def["response_timeout_secs"], tc.block)
		schema := def["api_schema"].(map[string]any)["request_body_schema"].(map[string]any)
		props := schema["properties"].(map[string]any)
		for _, v := range platform.ElevenLabsSystemVariables {
			require.Equal(t, v.Name, props[v.Name].(map[string]any)["dynamic_variable"], "the platform fills %s", v.Name)
		}
		require.Contains(t, schema["required"], platform.ElevenLabsConversationID)
	}
}
