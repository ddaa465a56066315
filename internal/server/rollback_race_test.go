package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// slowBackOffice holds the next work order's answer for d after the
// sandbox created it, as a back office that takes its time.
func (e *env) slowBackOffice(d time.Duration) {
	e.t.Helper()
	require.NoError(e.t, e.standins.Sandbox.Faults().Add(fault.Rule{Action: fault.Delay, Delay: d, Method: "POST", Path: "/v1/work_orders"}))
}

// invokeAsync creates a work order in the background; the answer arrives
// on the channel once the call is final.
func (e *env) invokeAsync(name string) <-chan apiclient.Response {
	out := make(chan apiclient.Response, 1)
	go func() {
		resp, err := e.invoke("create_work_order", e.key(name), woArgs)
		if err == nil && resp.Pending {
			resp, err = e.agent.Wait(e.ctx, resp.InvocationID)
		}
		if !assertNoError(e.t, err) {
			close(out)
			return
		}
		out <- resp
	}()
	return out
}

func (e *env) rollbackAsync(reason string) <-chan apitype.RollbackResult {
	out := make(chan apitype.RollbackResult, 1)
	go func() {
		res, err := e.agent.Rollback(e.ctx, e.session, reason)
		if !assertNoError(e.t, err) {
			close(out)
			return
		}
		out <- res
	}()
	return out
}

func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("unexpected error: %v", err)
		return false
	}
	return true
}

func (e *env) waitSessionState(want mt.SessionState) apitype.Session {
	e.t.Helper()
	var sess apitype.Session
	require.Eventually(e.t, func() bool {
		var err error
		sess, err = e.agent.Session(e.ctx, e.session)
		return err == nil && sess.State == want
	}, 30*time.Second, 20*time.Millisecond, "session %s", want)
	return sess
}

func (e *env) requireCancelledOnce(id string) {
	e.t.Helper()
	wo, ok := e.standins.Sandbox.WorkOrder(id)
	require.True(e.t, ok, id)
	require.Equal(e.t, "cancelled", wo.Status, id)
	require.Equal(e.t, 1, wo.CancelCount, id)
}

// A caller asks for a work order and, while the back office is still
// answering, changes their mind: the rollback waits for the call, then
// undoes it with everything else, and nobody has to step in.
func TestRollbackRacingACallUndoesIt(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *options) { o.providerTimeout = 90 * time.Second })
	first := e.createWorkOrder("wo1")

	// Held longer than the race can take on a loaded machine, and let go
	// once the rollback is seen waiting for it.
	e.slowBackOffice(60 * time.Second)
	call := e.invokeAsync("wo2")
	require.NoError(t, e.standins.Sandbox.Faults().WaitHeld(e.ctx, 1), "the work order is created and its answer held")
	rollback := e.rollbackAsync("caller changed their mind")

	during := e.waitSessionState(mt.SessionRollingBack)
	require.NotNil(t, during.RollbackStartedAt)
	// The agent's connection dropped and it asks again: the request joins
	// the rollback under way rather than being refused or running twice.
	again := e.rollbackAsync("caller changed their mind")
	_, err := e.invoke("create_work_order", e.key("wo3"), woArgs)
	obs := requireRefusal(t, err, http.StatusConflict, mt.CodeSessionRollingBack)
	require.Contains(t, obs.Summary, "being rolled back")
	lookup, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, lookup.State, "lookups go on")
	e.standins.Sandbox.Faults().Release()

	done := <-call
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	require.NotNil(t, done.Observation.Receipt, "the effect happened, and its receipt says so")
	require.Contains(t, done.Observation.Summary, "being undone")
	require.Contains(t, string(done.Observation.Payload), `"being_undone":true`)
	second := done.Observation.Receipt.ID

	res := <-rollback
	require.False(t, res.Halted, "%+v", res)
	require.Len(t, res.Steps, 2)
	require.Equal(t, second, res.Steps[0].Receipt.ID, "what completed during the wait is undone first")
	require.Equal(t, first, res.Steps[1].Receipt.ID)
	require.Equal(t, res, <-again, "the repeated request gets the same answer")
	e.requireCancelledOnce(first)
	e.requireCancelledOnce(second)
	require.Equal(t, 2, e.standins.Sandbox.CountWorkOrders(), "the call refused during the rollback created nothing")

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, mt.SessionActive, sess.State, "no operator step")
	require.Nil(t, sess.RollbackStartedAt)
	var receipts []string
	for _, c := range sess.Calls {
		if c.OperationKey == e.key("wo2") {
			require.NotNil(t, c.Receipt)
			receipts = append(receipts, c.Receipt.ID)
		}
	}
	for _, u := range sess.UndoStack {
		require.Equal(t, "compensated", u.Status)
		require.NotNil(t, u.Receipt, "the compensation's receipt")
		if u.OperationKey == e.key("wo2") {
			receipts = append(receipts, u.Receipt.ID)
		}
	}
	require.Equal(t, []string{second, second}, receipts, "the effect's receipt and the cancel's, both for the same work order")

	_, err = e.invoke("create_work_order", e.key("wo4"), woArgs)
	require.NoError(t, err, "the session is open again")
}

// An effect still unknown after the wait halts the session and names it;
// once it settles, resolve --retry undoes it exactly once.
func TestRollbackHaltsOnAnUnsettledEffectAndRetryUndoesIt(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *options) {
		o.providerTimeout = 90 * time.Second
		o.rollbackWait = 300 * time.Millisecond
	})
	// Held well past the rollback's wait, and let go once the halt is seen.
	e.slowBackOffice(60 * time.Second)
	call := e.invokeAsync("wo1")
	require.NoError(t, e.standins.Sandbox.Faults().WaitHeld(e.ctx, 1))

	res, err := e.agent.Rollback(e.ctx, e.session, "caller changed their mind")
	require.NoError(t, err)
	require.True(t, res.Halted)
	require.Contains(t, res.FailedStep, "cancel_work_order")
	require.Equal(t, "pending", res.Steps[0].Status)
	require.Contains(t, res.Steps[0].Summary, e.key("wo1"), "the halt names the effect")

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, mt.SessionHalted, sess.State)
	require.Equal(t, res.FailedStep, sess.HaltStep)
	require.Equal(t, "pending", sess.UndoStack[0].Status, "not failed: it runs when retried")
	require.Contains(t, sess.UndoStack[0].Detail, "still unknown")
	e.standins.Sandbox.Faults().Release()

	done := <-call
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	id := done.Observation.Receipt.ID
	wo, _ := e.standins.Sandbox.WorkOrder(id)
	require.Zero(t, wo.CancelCount, "nothing was undone blindly")

	resolved, err := e.ops.ResolveRetry(e.ctx, e.session, "the work order came through; undo it")
	require.NoError(t, err)
	require.Equal(t, mt.SessionActive, resolved.State)
	require.Equal(t, "retry", resolved.Resolution)
	require.Equal(t, "compensated", resolved.UndoStack[0].Status)
	require.Equal(t, id, resolved.UndoStack[0].Receipt.ID)
	e.requireCancelledOnce(id)

	again, err := e.agent.Rollback(e.ctx, e.session, "again")
	require.NoError(t, err)
	require.Empty(t, again.Steps)
	e.requireCancelledOnce(id)
}
