package main

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/tools"
)

// TestEvalCanary runs and shows the canary of a dev-mode maestro whose
// catalog puts one on send_sms, read back from the Twilio stand-in.
func TestEvalCanary(t *testing.T) {
	t.Parallel()
	sms := "    connector:\n      kind: twilio_sms\n      to: \"{{.Args.to}}\"\n      body: \"{{.Args.body}}\"\n"
	src := string(tools.DemoCatalogYAML)
	require.Equal(t, 1, strings.Count(src, sms))
	src = strings.Replace(src, sms, sms+"    canary:\n      args: {to: \"+15005550006\", body: \"maestro canary\"}\n    requires_green_canary: true\n", 1)
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o600))

	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	d, err := server.Start(t.Context(), server.Config{
		Dev: true, HTTPAddr: "127.0.0.1:0", DataDir: t.TempDir(), TemporalPort: port, CatalogPath: path,
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Stop(t.Context()) })
	ops := []string{"--server", d.URL(), "--key", tools.DemoOpsKey}

	out, errOut, code := run(t, append(ops, "eval", "canary", "show")...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "send_sms")
	require.Contains(t, out, apitype.CanaryNone)

	out, errOut, code = run(t, append(ops, "eval", "canary", "run", "--json")...)
	require.Equal(t, 0, code, errOut+out)
	var st apitype.CanaryStatus
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.NotEmpty(t, st.RunID)
	require.Len(t, st.Tools, 1)
	require.Equal(t, apitype.CanaryGreen, st.Tools[0].State, st.Tools[0].Detail)

	out, _, code = run(t, append(ops, "eval", "canary", "show", "--json")...)
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.Equal(t, apitype.CanaryGreen, st.Tools[0].State)
	require.NotNil(t, st.Tools[0].LastSuccessAt)

	_, _, code = run(t, "--server", d.URL(), "--key", tools.DemoAgentKey, "eval", "canary", "show")
	require.NotEqual(t, 0, code, "an agent key does not read the canary")
}
