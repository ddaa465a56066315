package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/syncbuf"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
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

// TestDemoHoldLeavesARefundForAPerson plays the person at the console: the
// held refund is pending until decided, and the demo reports the outcome
// read back from the back office.
func TestDemoHoldLeavesARefundForAPerson(t *testing.T) {
	var out syncbuf.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var outcome mt.InvocationState
	err := Run(ctx, Config{Out: &out, DataDir: t.TempDir(), TemporalPort: freePort(t), Hold: true,
		Held: func(page string, state mt.InvocationState) {
			base, id, ok := strings.Cut(page, "/console/approvals/")
			require.True(t, ok, page)
			ops := apiclient.New(base, tools.DemoOpsKey, apiclient.Options{})
			if state == "" {
				a, err := ops.Approval(ctx, id)
				require.NoError(t, err)
				require.Equal(t, "pending", a.Status, "the demo leaves the refund for a person")
				_, err = ops.Modify(ctx, id, json.RawMessage(`{"tenant_id":"t_100","amount_cents":4000,"reason":"Overcharged late fee"}`), "one fee was due")
				require.NoError(t, err)
				return
			}
			outcome = state
			cancel()
		}})
	require.NoError(t, err, out.String())
	require.Equal(t, mt.InvocationSucceeded, outcome)
	require.Contains(t, out.String(), "ops console at http://127.0.0.1:")
	require.Regexp(t, `back-office API: refund re_\S+ of 4000 cents has succeeded`, out.String())
}
