package faults_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// TestTemporalRestartLosesNothing stops the dev-mode Temporal server while
// a refund waits for its approval and a work order is held inside the
// provider, starts it again on the same SQLite files and port, and proves
// that both calls complete with receipts and exactly one effect each at
// the receiver. The service keeps its client and worker across the
// restart: the SDK redials the same address, as a worker in production
// does when its Temporal cluster restarts.
func TestTemporalRestartLosesNothing(t *testing.T) {
	t.Parallel()
	began := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	cfg := devtemporal.Config{DataDir: t.TempDir(), Port: port, Logger: slog.New(slog.DiscardHandler)}
	srv, err := devtemporal.Start(ctx, cfg)
	require.NoError(t, err)
	// The cleanup stops whichever server is running when the test ends:
	// the first if the restart failed, else the second.
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = srv.Stop()
		}
	})
	tc, err := client.Dial(testCodec.Apply(client.Options{
		HostPort: srv.HostPort(), Namespace: srv.Namespace(),
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	}))
	require.NoError(t, err)
	t.Cleanup(tc.Close)

	m := startMaestro(t, config{
		store:    ledgertest.SQLite(t),
		temporal: tc,
		// The work order is held across the restart; its provider call
		// must outlast the hold, or it would end as unknown and prove
		// reconciliation instead.
		providerTimeout: 40 * time.Second,
		waitTimeout:     500 * time.Millisecond,
	})

	// In flight: a refund at the approval gate, and a work order whose
	// request the sandbox holds before acting on it.
	refund, err := m.agent.Invoke(ctx, m.request("issue_refund", "refund", refundArgs))
	require.NoError(t, err)
	require.Equal(t, mt.InvocationAwaitingApproval, refund.State)
	require.NotEmpty(t, refund.ApprovalID, "a refund waits for a human")

	faults := m.standins.Sandbox.Faults()
	require.NoError(t, faults.Add(fault.Rule{Action: fault.Hang, Method: "POST", Path: "/v1/work_orders"}))
	workOrder, err := m.agent.Invoke(ctx, m.request("create_work_order", "work-order", workOrderArgs))
	require.NoError(t, err)
	require.True(t, workOrder.Pending, "the work order is held at the provider: %+v", workOrder)
	waitFor(ctx, t, "the sandbox to hold the work order", func() bool { return faults.Held() == 1 })

	// The restart: same files, same port.
	down := time.Now()
	require.NoError(t, srv.Stop())
	stopped = true
	srv, err = devtemporal.Start(ctx, cfg)
	require.NoError(t, err)
	stopped = false
	restarted := time.Since(down)

	// The approval reaches the refund's workflow through the restarted
	// server, and the held request goes through and reports back to it.
	_, err = m.ops.Approve(ctx, refund.ApprovalID, "duplicate payment confirmed")
	require.NoError(t, err)
	faults.Release()

	for _, inv := range []struct{ name, id string }{{"refund", refund.InvocationID}, {"work order", workOrder.InvocationID}} {
		final, err := m.agent.Wait(ctx, inv.id)
		require.NoError(t, err, inv.name)
		require.Equal(t, mt.InvocationSucceeded, final.State, "%s: %+v", inv.name, final.Observation)
		require.NotNil(t, final.Observation.Receipt, "%s: a receipt from the provider", inv.name)
		require.NotEmpty(t, final.Observation.Receipt.ID, inv.name)
	}
	require.Equal(t, 1, m.standins.Sandbox.CountRefunds(), "exactly one refund at the sandbox")
	require.Equal(t, 1, m.standins.Sandbox.CountWorkOrders(), "exactly one work order at the sandbox")
	t.Logf("Temporal down and back in %s; both calls completed once, %s in all",
		restarted.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}
