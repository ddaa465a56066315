package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// withStrandableEffects lets a test strand an effect: the provider call
// outlives the test, the lease runs out at once, the API answers 202 soon,
// and the sweep looks at every open invocation.
func withStrandableEffects(o *options) {
	o.providerTimeout = time.Minute
	o.leaseTTL = 500 * time.Millisecond
	o.waitTimeout = time.Second
	o.sweepIdle = time.Millisecond
}

// strandWorkOrder starts a work order whose provider call is held after
// the provider acted, then terminates its workflow through the Temporal
// API, as an operator or a crashed deployment would, and waits for the
// lease of the attempt left behind to run out.
func (e *env) strandWorkOrder(key string) {
	e.t.Helper()
	faults := e.standins.Sandbox.Faults()
	require.NoError(e.t, faults.Add(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect, Method: http.MethodPost}))
	e.t.Cleanup(faults.Release)

	resp, err := e.invoke("create_work_order", key, woArgs)
	require.NoError(e.t, err)
	require.Equal(e.t, mt.InvocationRunning, resp.State, "%+v", resp.Observation)
	require.NoError(e.t, faults.WaitHeld(e.ctx, 1))
	require.NoError(e.t, e.temporal.TerminateWorkflow(e.ctx, workflows.InvocationWorkflowID(key), "", "killed mid-effect by the test"))

	require.Eventually(e.t, func() bool {
		effs, err := e.store.EffectListLeaseExpired(e.ctx, 0)
		require.NoError(e.t, err)
		return len(effs) == 1 && effs[0].OperationKey == key
	}, 10*time.Second, 50*time.Millisecond, "the stranded attempt's lease never ran out")
}

// sweep runs one sweep on the test's worker, as the schedule does.
func (e *env) sweep() workflows.SweepResult {
	e.t.Helper()
	run, err := e.temporal.ExecuteWorkflow(e.ctx, client.StartWorkflowOptions{
		ID: "sweep-" + randomID(), TaskQueue: e.taskQueue,
	}, workflows.SweepWorkflowName)
	require.NoError(e.t, err)
	var res workflows.SweepResult
	require.NoError(e.t, run.Get(e.ctx, &res))
	return res
}

func TestSweepHoldsAnEffectWhoseWorkflowWasTerminated(t *testing.T) {
	t.Parallel()
	e := setup(t, withStrandableEffects)
	key := e.key("wo")
	e.strandWorkOrder(key)

	// The sweep is scheduled on Temporal for this task queue.
	e.describeSchedule(server.SweepScheduleID(e.taskQueue))

	// The schedule's own run may get there first; either way one sweep
	// holds the effect, and what it leaves is checked below.
	if res := e.sweep(); res != (workflows.SweepResult{}) {
		require.Equal(t, workflows.SweepResult{Held: 1, Finished: 1}, res)
	}

	eff, err := e.store.EffectGet(e.ctx, key)
	require.NoError(t, err)
	require.Equal(t, mt.EffectNeedsReconciliation, eff.Status)
	inv, err := e.store.InvocationGetByKey(e.ctx, key)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationNeedsReconciliation, inv.State)
	require.Equal(t, mt.CodeOutcomeUnknown, inv.Observation.Code)
	require.Contains(t, inv.Observation.NextActions.RootCause, "its workflow ended")

	held := e.requireHeld(key)
	require.Contains(t, held.Reason, "lease ran out")
	require.Equal(t, []string{string(ledger.ReconciliationEscalated)}, e.reconciliationKinds(key))
	r, err := e.ops.Reconciliation(e.ctx, key)
	require.NoError(t, err)
	require.Equal(t, "sweeper", r.Events[0].Actor)

	// The agent re-sending its key hears the final outcome, not "running".
	resp, err := e.invoke("create_work_order", key, woArgs)
	require.NoError(t, err)
	require.False(t, resp.Pending)
	require.Equal(t, mt.InvocationNeedsReconciliation, resp.State)
	require.Equal(t, mt.CodeOutcomeUnknown, resp.Observation.Code)

	// A second sweep has nothing left to do, and nothing was sent twice.
	require.Equal(t, workflows.SweepResult{}, e.sweep())
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders())

	// The provider's answer, held until now, reaches the attempt the
	// terminated workflow left behind: its receipt settles the held effect
	// instead of being dropped.
	e.standins.Sandbox.Faults().Release()
	require.Eventually(t, func() bool {
		eff, err := e.store.EffectGet(e.ctx, key)
		require.NoError(t, err)
		return eff.Status == mt.EffectSucceeded
	}, 30*time.Second, 50*time.Millisecond, "the late receipt was dropped")
	eff, err = e.store.EffectGet(e.ctx, key)
	require.NoError(t, err)
	require.NotNil(t, eff.Receipt)
	_, ok := e.standins.Sandbox.WorkOrder(eff.Receipt.ID)
	require.True(t, ok, "the receipt is the provider's own")
	require.Equal(t, []string{string(ledger.ReconciliationEscalated), string(ledger.ReconciliationAdopted)}, e.reconciliationKinds(key))
	resp, err = e.invoke("create_work_order", key, woArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State)
	require.Equal(t, eff.Receipt.ID, resp.Observation.Receipt.ID)
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders())
}

func TestResentKeyOfATerminatedWorkflowAnswersTheFinalObservation(t *testing.T) {
	t.Parallel()
	e := setup(t, withStrandableEffects)
	key := e.key("wo")
	e.strandWorkOrder(key)

	resp, err := e.invoke("create_work_order", key, woArgs)
	require.NoError(t, err)
	require.False(t, resp.Pending, "%+v", resp.Observation)
	require.Equal(t, mt.InvocationNeedsReconciliation, resp.State)
	require.Equal(t, mt.CodeOutcomeUnknown, resp.Observation.Code)
	require.NotEmpty(t, resp.Observation.NextActions.StopCondition)
	e.requireHeld(key)

	got, err := e.agent.Invocation(e.ctx, resp.InvocationID)
	require.NoError(t, err)
	require.False(t, got.Pending)
	require.Equal(t, mt.InvocationNeedsReconciliation, got.State)
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders())
}

func TestResentKeyOfATerminatedApprovalWaitAnswersFailed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	key := e.key("refund")
	args := `{"tenant_id":"t_100","amount_cents":1500,"reason":"Duplicate payment"}`
	resp, err := e.invoke("issue_refund", key, args)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationAwaitingApproval, resp.State)
	require.NoError(t, e.temporal.TerminateWorkflow(e.ctx, workflows.InvocationWorkflowID(key), "", "killed by the test"))

	again, err := e.invoke("issue_refund", key, args)
	require.NoError(t, err)
	require.False(t, again.Pending, "%+v", again.Observation)
	require.Equal(t, mt.InvocationFailed, again.State)
	require.Equal(t, mt.CodeAborted, again.Observation.Code)
	require.Contains(t, again.Observation.NextActions.RootCause, "its workflow ended")
	require.Zero(t, e.standins.Sandbox.CountRefunds())

	inv, err := e.store.InvocationGetByKey(e.ctx, key)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationFailed, inv.State)
}

func TestSweepFinishesATerminatedApprovalWait(t *testing.T) {
	t.Parallel()
	e := setup(t, withStrandableEffects)
	key := e.key("refund")
	resp, err := e.invoke("issue_refund", key, refundArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationAwaitingApproval, resp.State)

	// A workflow that still waits is left alone.
	require.Equal(t, workflows.SweepResult{}, e.sweep())
	inv, err := e.store.InvocationGetByKey(e.ctx, key)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationAwaitingApproval, inv.State)

	require.NoError(t, e.temporal.TerminateWorkflow(e.ctx, workflows.InvocationWorkflowID(key), "", "killed by the test"))
	require.Equal(t, workflows.SweepResult{Finished: 1}, e.sweep())
	inv, err = e.store.InvocationGetByKey(e.ctx, key)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationFailed, inv.State)
	require.Equal(t, mt.CodeAborted, inv.Observation.Code)

	got, err := e.agent.Invocation(e.ctx, resp.InvocationID)
	require.NoError(t, err)
	require.False(t, got.Pending)
	require.Equal(t, mt.InvocationFailed, got.State)
}

func TestPollOfATerminatedApprovalWaitAnswersFailed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	key := e.key("refund")
	resp, err := e.invoke("issue_refund", key, refundArgs)
	require.NoError(t, err)
	require.True(t, resp.Pending)
	require.NoError(t, e.temporal.TerminateWorkflow(e.ctx, workflows.InvocationWorkflowID(key), "", "killed by the test"))

	got, err := e.agent.Invocation(e.ctx, resp.InvocationID)
	require.NoError(t, err)
	require.False(t, got.Pending, "%+v", got.Observation)
	require.Equal(t, mt.InvocationFailed, got.State)
	require.Equal(t, mt.CodeAborted, got.Observation.Code)
}
