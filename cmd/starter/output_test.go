package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// requireColumn checks that each value starts at the same column on its
// line, with at least two spaces before it.
func requireColumn(t *testing.T, out string, values ...string) {
	t.Helper()
	col := -1
	for _, v := range values {
		var found bool
		for line := range strings.Lines(out) {
			i := strings.Index(line, v)
			if i < 0 {
				continue
			}
			found = true
			require.GreaterOrEqual(t, i, 2, line)
			require.Equal(t, "  ", line[i-2:i], "the value runs into its key: %q", line)
			if col < 0 {
				col = i
			}
			require.Equal(t, col, i, "misaligned: %q\n%s", line, out)
			break
		}
		require.True(t, found, "%q not in\n%s", v, out)
	}
}

func TestObservationTextAligns(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, printObservation(&out, mt.Observation{
		Status:  mt.StatusSuccess,
		Summary: "issue_refund succeeded",
		Receipt: &mt.Receipt{Provider: "http:sandbox", ID: "re_VZ1", Status: "succeeded", Fields: map[string]string{
			"resource_id": "re_VZ1", "status": "succeeded", "a_much_longer_receipt_field": "x1",
		}},
		NextActions: &mt.NextActions{RootCause: "none", Remediation: "nothing", StopCondition: "done"},
	}))
	requireColumn(t, out.String(), "issue_refund succeeded", "http:sandbox re_VZ1", "re_VZ1\n", "x1", "none", "nothing", "done")
}

func TestSessionTextAligns(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, printSession(&out, apitype.Session{
		SessionID: "call-1", AgentID: "voice-agent", State: "active",
		Calls: []apitype.SessionCall{
			{Tool: "lookup_tenant", State: mt.InvocationSucceeded, OperationKey: "call-1:lookup", Summary: "found"},
			{Tool: "a_tool_with_a_name_longer_than_twenty_two", State: mt.InvocationAwaitingApproval, OperationKey: "k", Summary: "held for a manager"},
		},
	}))
	requireColumn(t, out.String(), "call-1\n", "voice-agent", "active")
	requireColumn(t, out.String(), string(mt.InvocationSucceeded), string(mt.InvocationAwaitingApproval))
	requireColumn(t, out.String(), "found", "held for a manager")
}

func TestHelpSaysJSONIsStable(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "--json\noutput is stable")
}

func TestCallbackStatusIsShown(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 15, 4, 5, 0, time.UTC)
	require.Equal(t, "delivered after 2 attempt(s) at 2026-12-01 15:04:05Z",
		describeCallback(&apitype.Callback{Status: "delivered", Attempts: 2, DeliveredAt: &at}))
	require.Equal(t, "pending after 1 attempt(s); last error: the callback URL answered 500 Internal Server Error",
		describeCallback(&apitype.Callback{Status: "pending", Attempts: 1, LastError: "the callback URL answered 500 Internal Server Error"}))
}
