package server_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// pendingCompensation finds the open approval request of the session's
// compensation of tool.
func (e *env) pendingCompensation(tool string) apitype.Approval {
	e.t.Helper()
	list, err := e.ops.Approvals(e.ctx, "pending")
	require.NoError(e.t, err)
	for _, a := range list.Approvals {
		if a.SessionID == e.session && a.Tool == tool {
			return a
		}
	}
	require.FailNow(e.t, "no pending approval request", "for %s in session %s", tool, e.session)
	return apitype.Approval{}
}

// undoStatus reads one undo entry's status from the session view.
func (e *env) undoStatus(undoID string) string {
	e.t.Helper()
	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(e.t, err)
	for _, u := range sess.UndoStack {
		if u.UndoID == undoID {
			return u.Status
		}
	}
	return ""
}

func TestAgentRollbackOfARefundWaitsForAManager(t *testing.T) {
	t.Parallel()
	e := setup(t)
	wo := e.createWorkOrder("wo")
	refund := e.approvedRefund("refund")

	res, err := e.agent.Rollback(e.ctx, e.session, "caller changed their mind")
	require.NoError(t, err)
	require.False(t, res.Halted)
	require.Len(t, res.Steps, 1, "the rollback stops at the money compensation")
	step := res.Steps[0]
	require.Equal(t, "cancel_refund", step.Tool)
	require.Equal(t, workflows.UndoAwaitingApproval, step.Status)

	// Nothing moved: the refund stands and the work order is untouched
	// until a manager decides.
	r, ok := e.standins.Sandbox.Refund(refund)
	require.True(t, ok)
	require.Equal(t, "succeeded", r.Status)
	w, _ := e.standins.Sandbox.WorkOrder(wo)
	require.Zero(t, w.CancelCount)

	apr := e.pendingCompensation("cancel_refund")
	require.Equal(t, "manager", apr.ApproverRole, "routed to the compensation tool's approver role")
	require.Equal(t, workflows.CompensationOperationKey(step.UndoID), apr.OperationKey)
	require.Contains(t, step.Summary, apr.ID)
	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, mt.SessionAwaitingApproval, sess.State, "the session waits for the manager")
	// Asked again while it waits, the agent hears the same answer; nothing
	// more is undone or requested.
	again, err := e.agent.Rollback(e.ctx, e.session, "again")
	require.NoError(t, err)
	require.Equal(t, res, again)

	_, err = e.ops.Approve(e.ctx, apr.ID, "tenant asked to keep the money in the account")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return e.undoStatus(step.UndoID) == string(ledger.UndoCompensated) },
		20*time.Second, 50*time.Millisecond, "the approved compensation runs")
	r, _ = e.standins.Sandbox.Refund(refund)
	require.Equal(t, "cancelled", r.Status)
	require.Eventually(t, func() bool {
		w, _ := e.standins.Sandbox.WorkOrder(wo)
		return w.CancelCount == 1
	}, 20*time.Second, 50*time.Millisecond, "the rest of the rollback goes on after the decision")

	rep, err := e.ops.Audit(e.ctx)
	require.NoError(t, err)
	require.True(t, rep.Clean, "the compensation spent its approval: %+v", rep.Findings)
	// The rollback opens the session again once its last step ran.
	e.waitSessionState(mt.SessionActive)
}

func TestRejectedRefundCompensationHaltsTheSessionNamingTheStep(t *testing.T) {
	t.Parallel()
	e := setup(t)
	refund := e.approvedRefund("refund")

	res, err := e.agent.Rollback(e.ctx, e.session, "")
	require.NoError(t, err)
	require.Equal(t, workflows.UndoAwaitingApproval, res.Steps[0].Status)
	apr := e.pendingCompensation("cancel_refund")

	_, err = e.ops.Reject(e.ctx, apr.ID, "the refund was right")
	require.NoError(t, err)

	var sess apitype.Session
	require.Eventually(t, func() bool {
		sess, err = e.agent.Session(e.ctx, e.session)
		return err == nil && sess.State == mt.SessionHalted
	}, 20*time.Second, 50*time.Millisecond)
	require.Contains(t, sess.HaltStep, "cancel_refund")
	require.Contains(t, sess.HaltReason, "rejected")
	r, _ := e.standins.Sandbox.Refund(refund)
	require.Equal(t, "succeeded", r.Status, "a rejected compensation moves no money")
	require.Equal(t, 1, e.standins.Sandbox.CountRefunds())
}
