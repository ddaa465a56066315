package demo

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/temporalx/devtemporal"
)

// TestDemoRuns plays the whole scripted call, as `make demo` does; every
// step checks its claims against the stand-ins' APIs.
func TestDemoRuns(t *testing.T) {
	var out bytes.Buffer
	err := Run(t.Context(), Config{Out: &out, DataDir: t.TempDir(), TemporalPort: freePort(t)})
	require.NoError(t, err, out.String())
	require.Contains(t, out.String(), "Demo complete")
	require.Contains(t, out.String(), "Twilio API: message SM")
	require.Contains(t, out.String(), "SES store: message")
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	return port
}
