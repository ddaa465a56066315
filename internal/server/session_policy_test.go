package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// withAgentPolicy sets one of the demo agent's session policies.
func withAgentPolicy(from, to string) func(*options) {
	return func(o *options) {
		o.catalog = []byte(strings.Replace(string(tools.DemoCatalogYAML), from, to, 1))
	}
}

const callerSMS = `{"to":"+14155550100","body":"Your technician is on the way."}`

func TestRejectionHaltsTheSessionUntilResolved(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")

	_, err := e.ops.Reject(e.ctx, pending.ApprovalID, "not a duplicate")
	require.NoError(t, err)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationRejected, done.State)
	require.Equal(t, mt.CodeApprovalRejected, done.Observation.Code)
	require.Contains(t, done.Observation.Summary, "halted", "the agent learns of the halt from the rejected call")
	require.Contains(t, done.Observation.NextActions.StopCondition, string(mt.CodeSessionHalted))
	require.JSONEq(t, `{"session_id":"`+e.session+`","session_state":"halted"}`, string(done.Observation.Payload))

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, mt.SessionHalted, sess.State)
	require.Contains(t, sess.HaltStep, pending.ApprovalID)
	require.Contains(t, sess.HaltReason, "operator:demo-manager rejected issue_refund")

	// Asking again under a new key, or doing anything else, is refused.
	_, err = e.invoke("issue_refund", e.key("refund-again"), refundArgs)
	requireRefusal(t, err, http.StatusConflict, mt.CodeSessionHalted)
	obs := requireRefusal(t, func() error {
		_, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
		return err
	}(),
		http.StatusConflict, mt.CodeSessionHalted)
	require.Contains(t, obs.NextActions.RootCause, "rejected issue_refund")
	require.Zero(t, e.standins.Sandbox.CountRefunds())

	resolved, err := e.ops.Resolve(e.ctx, e.session, "spoke to the tenant; no refund is owed")
	require.NoError(t, err)
	require.Equal(t, mt.SessionActive, resolved.State)
	resp, err := e.invoke("lookup_tenant", e.key("after-resolve"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State)
}

func TestOnRejectContinueLeavesTheSessionActive(t *testing.T) {
	t.Parallel()
	e := setup(t, withAgentPolicy("on_reject: halt", "on_reject: continue"))
	pending := e.requestRefund("refund")
	_, err := e.ops.Reject(e.ctx, pending.ApprovalID, "not a duplicate")
	require.NoError(t, err)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationRejected, done.State)
	require.NotContains(t, done.Observation.Summary, "halted")

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, mt.SessionActive, sess.State)
	resp, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State)
}

func TestPendingApprovalSuspendsTheSessionsWrites(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")

	// Reads go on, and so does a recorded intent: it is no effect until
	// the post-call workflow delivers it.
	resp, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State)
	resp, err = e.invoke("take_message", e.key("msg"), `{"message":"Call me about the refund."}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationRecorded, resp.State)
	// Asking about the pending call again answers with it.
	again, err := e.invoke("issue_refund", e.key("refund"), refundArgs)
	require.NoError(t, err)
	require.Equal(t, pending.InvocationID, again.InvocationID)

	// Writes wait: a compensable one, and an irreversible one a rule
	// would approve on its own.
	for tool, args := range map[string]string{"create_work_order": woArgs, "send_sms": callerSMS} {
		_, err := e.invoke(tool, e.key(tool), args)
		obs := requireRefusal(t, err, http.StatusConflict, mt.CodeSessionAwaitingApproval)
		require.Contains(t, obs.Summary, pending.ApprovalID, tool)
		require.Contains(t, obs.Summary, "issue_refund", tool)
		var waits map[string]string
		require.NoError(t, json.Unmarshal(obs.Payload, &waits))
		require.Equal(t, map[string]string{"awaiting_approval_id": pending.ApprovalID, "awaiting_tool": "issue_refund",
			"awaiting_invocation_id": pending.InvocationID}, waits)
	}
	require.Zero(t, e.standins.Sandbox.CountWorkOrders())
	require.Zero(t, e.standins.Twilio.CountMessages())

	_, err = e.ops.Approve(e.ctx, pending.ApprovalID, "duplicate confirmed")
	require.NoError(t, err)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State)
	e.createWorkOrder("create_work_order")
}

func TestAllowWritesPolicyLetsWritesRunWhileAwaiting(t *testing.T) {
	t.Parallel()
	e := setup(t, withAgentPolicy("while_awaiting_approval: strict", "while_awaiting_approval: allow_writes"))
	e.requestRefund("refund")
	e.createWorkOrder("wo")
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders())
}

func TestApproverSeesEffectClassAndReversibility(t *testing.T) {
	t.Parallel()
	e := setup(t, withStrictFacts)
	refund := e.requestRefund("refund")
	a, err := e.ops.Approval(e.ctx, refund.ApprovalID)
	require.NoError(t, err)
	require.Equal(t, "money", a.Effect)
	require.Equal(t, "compensable", a.Reversibility)
	require.NotEmpty(t, a.Reason)
	require.NotNil(t, a.RiskTags)

	// Under strict facts no rule approves the text, so it waits for a
	// human too (and, being a write, after the refund is decided).
	_, err = e.ops.Approve(e.ctx, refund.ApprovalID, "duplicate confirmed")
	require.NoError(t, err)
	_, err = e.agent.Wait(e.ctx, refund.InvocationID)
	require.NoError(t, err)
	sms, err := e.invoke("send_sms", e.key("sms"), callerSMS)
	require.NoError(t, err)
	require.True(t, sms.Pending)
	list, err := e.ops.Approvals(e.ctx, "pending")
	require.NoError(t, err)
	var found bool
	for _, a := range list.Approvals {
		if a.ID == sms.ApprovalID {
			found = true
			require.Equal(t, "write", a.Effect)
			require.Equal(t, "irreversible", a.Reversibility)
		}
	}
	require.True(t, found, "the text's request is listed with its classes")
}

// TestChangedCompensationRunsAsTheEffectsCatalogHadIt: a redeploy that
// changes a compensation does not change the undo of an effect made
// before it: the rollback runs the compensation of the catalog version the
// effect's invocation was admitted under, as recorded on its undo entry.
func TestChangedCompensationRunsAsTheEffectsCatalogHadIt(t *testing.T) {
	t.Parallel()
	before := setup(t)
	wo := before.createWorkOrder("wo")
	sess, err := before.agent.Session(before.ctx, before.session)
	require.NoError(t, err)
	require.Len(t, sess.UndoStack, 1)
	recorded := sess.UndoStack[0].Version
	require.Regexp(t, `^1\+[0-9a-f]{16}$`, recorded)

	// A redeploy changes what cancelling a work order sends, without
	// bumping its version.
	e := setup(t, func(o *options) {
		o.restartOf = before
		o.catalog = []byte(strings.Replace(string(tools.DemoCatalogYAML), "/cancel\"", "/cancel?notify=false\"", 1))
	})
	res, err := e.ops.Rollback(e.ctx, e.session, "caller changed their mind")
	require.NoError(t, err)
	require.False(t, res.Halted, "%+v", res.Steps)
	require.Len(t, res.Steps, 1)
	require.Equal(t, "compensated", res.Steps[0].Status, "%+v", res.Steps[0])

	got, ok := e.standins.Sandbox.WorkOrder(wo)
	require.True(t, ok)
	require.Equal(t, "cancelled", got.Status)
	require.Equal(t, 1, got.CancelCount, "the recorded compensation ran once")
}
