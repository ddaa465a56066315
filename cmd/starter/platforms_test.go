package main

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/tools"
)

// The export prints the Vapi tools of an agent with a platform block, as
// JSON ready to paste, and never the secret.
func TestPlatformsExport(t *testing.T) {
	t.Setenv("STARTER_TEST_VAPI_SECRET", "do-not-print-me")
	cat := strings.Replace(string(tools.DemoCatalogYAML), "    on_failure: none\n",
		"    on_failure: none\n    platform:\n      kind: vapi\n      secret_env: STARTER_TEST_VAPI_SECRET\n      tools: [send_sms, take_message]\n", 1)
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cat), 0o600))
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	d, err := server.Start(t.Context(), server.Config{
		Dev: true, HTTPAddr: "127.0.0.1:0", DataDir: t.TempDir(), TemporalPort: port, CatalogPath: path,
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Stop(t.Context()) })

	out, errOut, code := run(t, "--server", d.URL(), "--key", tools.DemoOpsKey, "platforms", "export", "vapi", "--agent", "voice-agent")
	require.Equal(t, 0, code, errOut)
	var defs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &defs), out)
	require.Len(t, defs, 2)
	fn := defs[0]["function"].(map[string]any)
	require.Equal(t, "send_sms", fn["name"])
	require.NotEmpty(t, fn["parameters"])
	require.Equal(t, d.URL()+"/v1/platforms/vapi/voice-agent", defs[0]["server"].(map[string]any)["url"])
	require.Contains(t, errOut, "STARTER_TEST_VAPI_SECRET")
	require.NotContains(t, out+errOut, "do-not-print-me")

	_, errOut, code = run(t, "--server", d.URL(), "--key", tools.DemoOpsKey, "platforms", "export", "retell", "--agent", "voice-agent")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "not configured for retell")
}
