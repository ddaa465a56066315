package server_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/syncbuf"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// pages returns the error-level log records that page an approver role.
func pages(t *testing.T, logs *syncbuf.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		if rec["page"] == true {
			out = append(out, rec)
		}
	}
	return out
}

func TestHeldMoneyPagesItsApproverRoleAndLeadsTheQueue(t *testing.T) {
	t.Parallel()
	logs := &syncbuf.Buffer{}
	e := setup(t, withShortProviderTimeout, func(o *options) { o.logs = logs })

	// An email held first: older, and not money.
	loseNextAnswer(t, e.standins.SES.Faults())
	mail, err := e.invoke("email_property_manager", e.key("mail"), emailArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationNeedsReconciliation, mail.State, "%+v", mail.Observation)

	loseNextAnswer(t, e.standins.Sandbox.Faults())
	pending := e.requestRefund("refund")
	_, err = e.ops.Approve(e.ctx, pending.ApprovalID, "duplicate confirmed")
	require.NoError(t, err)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationNeedsReconciliation, done.State, "%+v", done.Observation)

	list, err := e.ops.Reconciliations(e.ctx)
	require.NoError(t, err)
	var keys []string
	for _, r := range list.Reconciliations {
		keys = append(keys, r.OperationKey)
	}
	require.Equal(t, []string{e.key("refund"), e.key("mail")}, keys, "money first, though the email is older")
	require.Equal(t, "money", list.Reconciliations[0].Effect)
	require.Equal(t, "manager", list.Reconciliations[0].ApproverRole)
	require.Empty(t, list.Reconciliations[1].ApproverRole, "only money pages")

	got := pages(t, logs)
	require.Len(t, got, 1, "the money hold pages once; the email pages nobody")
	require.Equal(t, "ERROR", got[0]["level"])
	require.Equal(t, e.key("refund"), got[0]["operation_key"])
	require.Equal(t, "manager", got[0]["approver_role"])
	require.Equal(t, "issue_refund", got[0]["tool"])
}
