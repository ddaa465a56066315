package demo

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/devtemporal"
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
	require.Regexp(t, `back-office API: refund re_\S+ of \d+ cents has succeeded`, out.String())
	require.NotRegexp(t, `\b(re|wo|SM)[_A-Za-z0-9]+ (of \d+ cents )?is (succeeded|failed|sent|delivered)\b`, out.String(), "statuses read as English")
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	return port
}
