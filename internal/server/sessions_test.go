package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

const woArgs = `{"tenant_id":"t_100","category":"plumbing","description":"Sink leaks","priority":"urgent"}`

func (e *env) createWorkOrder(name string) string {
	e.t.Helper()
	resp, err := e.invoke("create_work_order", e.key(name), woArgs)
	require.NoError(e.t, err)
	require.Equal(e.t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	return resp.Observation.Receipt.ID
}

func (e *env) approvedRefund(name string) string {
	e.t.Helper()
	pending := e.requestRefund(name)
	_, err := e.ops.Approve(e.ctx, pending.ApprovalID, "")
	require.NoError(e.t, err)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(e.t, err)
	require.Equal(e.t, mt.InvocationSucceeded, done.State)
	return done.Observation.Receipt.ID
}

func TestRollbackCompensatesLIFOOnceEach(t *testing.T) {
	t.Parallel()
	e := setup(t)
	wo1 := e.createWorkOrder("wo1")
	wo2 := e.createWorkOrder("wo2")

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Len(t, sess.UndoStack, 2, "each compensable write pushed its undo entry")

	res, err := e.agent.Rollback(e.ctx, e.session, "caller changed their mind")
	require.NoError(t, err)
	require.False(t, res.Halted)
	require.Len(t, res.Steps, 2)
	require.Equal(t, []string{"cancel_work_order", "cancel_work_order"},
		[]string{res.Steps[0].Tool, res.Steps[1].Tool}, "newest effect first")
	require.Equal(t, wo2, res.Steps[0].Receipt.ID)
	require.Equal(t, wo1, res.Steps[1].Receipt.ID)

	// The effects are undone at the provider, each once.
	for _, id := range []string{wo1, wo2} {
		wo, ok := e.standins.Sandbox.WorkOrder(id)
		require.True(t, ok)
		require.Equal(t, "cancelled", wo.Status)
		require.Equal(t, 1, wo.CancelCount)
	}
	again, err := e.agent.Rollback(e.ctx, e.session, "again")
	require.NoError(t, err)
	require.Empty(t, again.Steps, "a second rollback compensates nothing twice")
	wo, _ := e.standins.Sandbox.WorkOrder(wo1)
	require.Equal(t, 1, wo.CancelCount)
}

func TestFailedCompensationHaltsTheSessionUntilResolved(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.createWorkOrder("wo1")
	require.NoError(t, e.standins.Sandbox.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusBadRequest, Method: "POST", Path: "/v1/work_orders/", Times: 10}))

	res, err := e.agent.Rollback(e.ctx, e.session, "")
	require.NoError(t, err)
	require.True(t, res.Halted)
	require.Contains(t, res.FailedStep, "cancel_work_order")

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, mt.SessionHalted, sess.State)
	require.Contains(t, sess.HaltStep, "cancel_work_order")

	_, err = e.invoke("lookup_tenant", e.key("after-halt"), `{"tenant_id":"t_100"}`)
	requireRefusal(t, err, http.StatusConflict, mt.CodeSessionHalted)
	_, err = e.agent.Resolve(e.ctx, e.session, "fixed")
	requireRefusal(t, err, http.StatusForbidden, mt.CodeNotApprover)

	e.standins.Sandbox.Faults().Reset()
	resolved, err := e.ops.Resolve(e.ctx, e.session, "cancelled the work order by phone")
	require.NoError(t, err)
	require.Equal(t, mt.SessionActive, resolved.State)
	require.Equal(t, "operator:demo-manager", resolved.ResolvedBy)
	require.Equal(t, "by_hand", resolved.Resolution)
	require.Equal(t, "compensated", resolved.UndoStack[0].Status, "the entry the rollback could not run is closed")
	require.Contains(t, resolved.UndoStack[0].Detail, "compensated by hand (operator:demo-manager): cancelled the work order by phone")
	require.Nil(t, resolved.UndoStack[0].Receipt, "a hand's work has no provider receipt")
	resp, err := e.invoke("lookup_tenant", e.key("after-resolve"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State)
}

func TestCallEndedDeliversDeferredWorkOnceWithReceipts(t *testing.T) {
	t.Parallel()
	e := setup(t)
	resp, err := e.invoke("take_message", e.key("msg"), `{"message":"Please renew my parking permit.","callback_number":"+14155550100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationRecorded, resp.State)
	require.Zero(t, e.standins.SES.CountEmails(), "nothing is delivered in-call")

	transcript := &mt.Transcript{Turns: []mt.Turn{
		{Speaker: "agent", Text: "How can I help?", At: time.Now()},
		{Speaker: "caller", Text: "My kitchen sink is leaking again.", At: time.Now()},
		{Speaker: "caller", Text: "And please call me back tomorrow.", At: time.Now()},
	}}
	end, err := e.agent.End(e.ctx, e.session, apitype.EndRequest{Transcript: transcript})
	require.NoError(t, err)
	require.True(t, end.Ended)
	e.waitPostCall()

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, mt.SessionEnded, sess.State)
	require.Len(t, sess.PostCall, 3, "the message, the leak and the callback")
	for _, it := range sess.PostCall {
		require.Equal(t, "delivered", it.Status, "%+v", it)
		require.NotNil(t, it.Receipt)
	}
	require.Equal(t, "delivered", sess.Deferred[0].Status)

	// Read the deliveries back from the providers.
	reader := e.standins.Reader()
	email, err := reader.SESMessage(e.ctx, sess.Deferred[0].Receipt.ID)
	require.NoError(t, err)
	require.Contains(t, email.Detail["destination"].(map[string]any)["to"], "office@demo-properties.example")
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders(), "the leak became a work order")
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "the callback request paged the office")

	again, err := e.agent.End(e.ctx, e.session, apitype.EndRequest{Transcript: transcript})
	require.NoError(t, err)
	require.False(t, again.Ended, "a repeated call-ended delivers nothing twice")
	require.Equal(t, 1, e.standins.SES.CountEmails())
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders())

	_, err = e.invoke("lookup_tenant", e.key("after-end"), `{"tenant_id":"t_100"}`)
	requireRefusal(t, err, http.StatusConflict, mt.CodeSessionEnded)
}

func TestSessionShowsAwaitingApproval(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.requestRefund("refund")

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, mt.SessionAwaitingApproval, sess.State)
	_, err = e.agent.Session(e.ctx, "call-unknown")
	requireRefusal(t, err, http.StatusNotFound, mt.CodeNotFound)
}

// waitPostCall waits for the session workflow, which starts the post-call
// workflow before it completes, and then for the post-call workflow.
func (e *env) waitPostCall() {
	e.t.Helper()
	require.NoError(e.t, e.temporal.GetWorkflow(e.ctx, workflows.SessionWorkflowID(e.session), "").Get(e.ctx, nil))
	require.NoError(e.t, e.temporal.GetWorkflow(e.ctx, workflows.PostCallWorkflowID(e.session), "").Get(e.ctx, nil))
}
