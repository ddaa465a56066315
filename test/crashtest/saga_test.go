//go:build crashtest

package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/standin"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// TestCrashMidSaga kills the worker in the middle of a rollback, after the
// first compensation reached the provider and before the undo entry
// recorded it, and proves that the rollback resumes on restart and undoes
// each effect exactly once, counted at the receiver.
func TestCrashMidSaga(t *testing.T) {
	start := time.Now()
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	sins, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = sins.Close() })
	session := "saga-" + randomHex()
	env := h.env(sins, ledgertest.PostgresDSN(t), "tq-"+session, false)
	args := []string{"--temporal", h.temporal}

	// Armed: the first compensation to come back from the provider kills
	// the process.
	w := startWorker(t, h.bin, "armed", args, append(env[:len(env):len(env)], "MAESTRO_FAILPOINT=after-compensation"))
	agent := apiclient.New(w.url, agentKey, apiclient.Options{})
	for i := range 2 {
		resp, err := agent.Invoke(ctx, apitype.InvokeRequest{
			SessionID: session, Tool: "create_work_order", OperationKey: fmt.Sprintf("%s:wo-%d", session, i),
			Args:           json.RawMessage(`{"tenant_id":"t_100","category":"hvac","description":"No heat","priority":"urgent"}`),
			SessionContext: map[string]string{"caller_number": callerNumber, "tenant_id": "t_100"},
		})
		if err == nil && resp.Pending {
			resp, err = agent.Wait(ctx, resp.InvocationID)
		}
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, resp.State, "work order %d: %+v", i, resp.Observation)
	}
	require.Equal(t, 2, sins.Sandbox.CountWorkOrders())

	// The rollback's caller loses its answer when the worker dies under
	// it; that error is the point.
	_, _ = agent.Rollback(ctx, session, "caller changed their mind")
	w.waitKilled(time.Minute)
	require.Equal(t, []int{0, 1}, cancelCounts(sins), "one work order was cancelled at the sandbox before the kill")

	// Restarted without the failpoint. The rollback update the dead worker
	// was running is still open in the session workflow: a re-issued
	// rollback would join it and wait until Temporal times out the lost
	// attempt and the new worker finishes the saga. The caller watches the
	// undo stack instead, as an agent whose request failed might.
	w = startWorker(t, h.bin, "restarted", args, env)
	agent = apiclient.New(w.url, agentKey, apiclient.Options{})
	waitFor(ctx, t, "the resumed rollback to compensate every work order", func() (bool, error) {
		sess, err := agent.Session(ctx, session)
		if err != nil {
			return false, err
		}
		require.Len(t, sess.UndoStack, 2)
		for _, u := range sess.UndoStack {
			if u.Status != workflows.UndoCompensated {
				return false, nil
			}
		}
		return true, nil
	})
	require.Equal(t, []int{1, 1}, cancelCounts(sins), "each work order cancelled exactly once at the sandbox")

	// The re-issued rollback is accepted now and finds nothing left to undo.
	res, err := agent.Rollback(ctx, session, "caller changed their mind")
	require.NoError(t, err)
	require.False(t, res.Halted, "%+v", res)
	for _, s := range res.Steps {
		require.Equal(t, workflows.UndoCompensated, s.Status, "%s: %s", s.OperationKey, s.Summary)
	}
	require.Equal(t, []int{1, 1}, cancelCounts(sins), "a repeated rollback compensates nothing twice")

	fmt.Printf("\nCrash mid-saga: the worker was killed with SIGKILL after the first of two\n")
	fmt.Printf("cancellations reached the sandbox, then restarted and the rollback re-issued.\n")
	fmt.Printf("  cancel_count per work order at the sandbox: %v (%s)\n\n", cancelCounts(sins), time.Since(start).Round(time.Second))
}

// cancelCounts lists how many cancel requests reached each work order at
// the sandbox, ascending, so the answer does not depend on which order the
// saga undid first.
func cancelCounts(sins *standin.Set) []int {
	counts := []int{}
	for _, wo := range sins.Sandbox.WorkOrders() {
		counts = append(counts, wo.CancelCount)
	}
	slices.Sort(counts)
	return counts
}

// waitFor polls cond until it holds, fails or ctx ends. Polling is the
// only way to observe the resumed saga: its caller's connection died with
// the worker.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		require.NoError(t, err, what)
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
