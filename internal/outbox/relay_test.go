package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/outbox"
)

// recorder stands in for Temporal's frontend: it answers each signal with
// the next scripted error (nil when the script has run out) and keeps what
// it accepted.
type recorder struct {
	mu       sync.Mutex
	script   []error
	accepted []string
}

func (r *recorder) SignalWorkflow(_ context.Context, workflowID, _, name string, arg any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.script) > 0 {
		err := r.script[0]
		r.script = r.script[1:]
		if err != nil {
			return err
		}
	}
	b, err := json.Marshal(arg)
	if err != nil {
		return err
	}
	r.accepted = append(r.accepted, workflowID+" "+name+" "+string(b))
	return nil
}

func newRelay(t *testing.T, st ledger.Store, sig outbox.Signaller) *outbox.Relay {
	t.Helper()
	r, err := outbox.New(outbox.Config{Store: st, Signaller: sig, FirstBackoff: time.Millisecond, MaxBackoff: time.Millisecond, TokenTTL: time.Hour})
	require.NoError(t, err)
	return r
}

func TestDeliverRetriesUntilAccepted(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(*testing.T) ledger.Store{"postgres": ledgertest.Postgres, "sqlite": ledgertest.SQLite} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			ctx := t.Context()
			rec := &recorder{script: []error{errors.New("unavailable"), errors.New("unavailable")}}
			relay := newRelay(t, st, rec)
			sig, err := st.OutboxInsert(ctx, ledger.OutboxSignal{WorkflowID: "session/s1", SignalName: "call-ended", Payload: json.RawMessage(`{"transcript":{"turns":[]}}`)})
			require.NoError(t, err)

			require.Error(t, relay.Deliver(ctx, sig))
			require.Eventually(t, func() bool {
				relay.Sweep(ctx)
				got, err := st.OutboxGet(ctx, sig.ID)
				return err == nil && got.DeliveredAt != nil
			}, 10*time.Second, 5*time.Millisecond)
			got, err := st.OutboxGet(ctx, sig.ID)
			require.NoError(t, err)
			require.Equal(t, 3, got.Attempts)
			require.Equal(t, []string{`session/s1 call-ended {"transcript":{"turns":[]}}`}, rec.accepted, "the stored argument is sent as JSON")
		})
	}
}

func TestDeliverAbandonsASignalWhoseWorkflowIsGone(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	ctx := t.Context()
	relay := newRelay(t, st, &recorder{script: []error{serviceerror.NewNotFound("workflow not found")}})
	sig, err := st.OutboxInsert(ctx, ledger.OutboxSignal{WorkflowID: "invocation/k", SignalName: "approval-decided", Payload: json.RawMessage(`{}`)})
	require.NoError(t, err)

	require.Error(t, relay.Deliver(ctx, sig))
	got, err := st.OutboxGet(ctx, sig.ID)
	require.NoError(t, err)
	require.NotNil(t, got.AbandonedAt)
	due, err := st.OutboxListDue(ctx, 0)
	require.NoError(t, err)
	require.Empty(t, due)
}

func TestNewRefusesMissingDependencies(t *testing.T) {
	t.Parallel()
	_, err := outbox.New(outbox.Config{Signaller: &recorder{}})
	require.ErrorContains(t, err, "a store is required")
	_, err = outbox.New(outbox.Config{Store: ledgertest.SQLite(t)})
	require.ErrorContains(t, err, "a signaller is required")
	_, err = outbox.New(outbox.Config{Store: ledgertest.SQLite(t), Signaller: &recorder{}, Interval: -time.Second})
	require.ErrorContains(t, err, "must not be negative")
}

func TestSweepLeavesAFreshSignalToTheRequestThatQueuedIt(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	ctx := t.Context()
	rec := &recorder{}
	var now time.Time
	relay, err := outbox.New(outbox.Config{Store: st, Signaller: rec, FirstAttemptGrace: 5 * time.Second,
		Now: func() time.Time { return now }})
	require.NoError(t, err)
	sig, err := st.OutboxInsert(ctx, ledger.OutboxSignal{WorkflowID: "invocation/k", SignalName: "approval-decided", Payload: json.RawMessage(`{}`)})
	require.NoError(t, err)

	// The request that queued it is about to signal: a sweep now would
	// wake the workflow twice.
	now = sig.CreatedAt.Add(time.Second)
	relay.Sweep(ctx)
	require.Empty(t, rec.accepted)

	// The request never did (it crashed, say): the sweep delivers.
	now = sig.CreatedAt.Add(6 * time.Second)
	relay.Sweep(ctx)
	require.Equal(t, []string{`invocation/k approval-decided {}`}, rec.accepted)
	got, err := st.OutboxGet(ctx, sig.ID)
	require.NoError(t, err)
	require.NotNil(t, got.DeliveredAt)
}

// A signal Temporal refuses as invalid would be refused on every attempt:
// the relay holds it for a human, who finds it in the reconciliation queue
// and the open reconciliations count, with Temporal's answer, and no sweep
// sends it again.
func TestDeliverHoldsASignalTemporalRefusesAsInvalid(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(*testing.T) ledger.Store{"postgres": ledgertest.Postgres, "sqlite": ledgertest.SQLite} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			ctx := t.Context()
			rec := &recorder{script: []error{serviceerror.NewInvalidArgument("Blob data size exceeds limit.")}}
			relay := newRelay(t, st, rec)
			_, err := st.SessionUpsert(ctx, ledger.Session{ID: "s1", AgentID: "agent_1"})
			require.NoError(t, err)
			_, _, sig, err := st.SessionEndSignalled(ctx, "s1", []byte(`{"turns":[]}`),
				ledger.OutboxSignal{WorkflowID: "session/s1", SignalName: "call-ended", Payload: json.RawMessage(`{"transcript":{"turns":[]}}`)})
			require.NoError(t, err)

			err = relay.Deliver(ctx, sig)
			var invalid *serviceerror.InvalidArgument
			require.ErrorAs(t, err, &invalid)
			got, err := st.OutboxGet(ctx, sig.ID)
			require.NoError(t, err)
			require.NotNil(t, got.HeldAt, "held for a human")
			require.Nil(t, got.AbandonedAt)
			require.Nil(t, got.DeliveredAt)
			require.Equal(t, 1, got.Attempts)
			require.Contains(t, got.LastError, "Blob data size exceeds limit", "the reason is Temporal's answer")

			relay.Sweep(ctx)
			due, err := st.OutboxListDue(ctx, 0)
			require.NoError(t, err)
			require.Empty(t, due, "nothing retries a held signal")
			require.Empty(t, rec.accepted)
			require.NoError(t, st.OutboxMarkFailed(ctx, sig.ID, "late", 0))
			got, err = st.OutboxGet(ctx, sig.ID)
			require.NoError(t, err)
			require.Equal(t, 1, got.Attempts, "a racing relay's late update is a no-op")

			page, err := st.ReconciliationPage(ctx, ledger.PageQuery{})
			require.NoError(t, err)
			require.Equal(t, []ledger.ReconciliationItem{{Kind: ledger.QueueHeldSignal, Rank: 0, At: page.Items[0].At,
				OperationKey: ledger.OutboxHeldKey(sig.ID)}}, page.Items)
			require.EqualValues(t, 1, page.Total)
			byAgent, err := st.ReconciliationPage(ctx, ledger.PageQuery{Status: string(ledger.QueueHeldSignal), AgentID: "agent_1"})
			require.NoError(t, err)
			require.Len(t, byAgent.Items, 1, "a held call-ended signal is the session's agent's")
			id, ok := ledger.ParseOutboxHeldKey(page.Items[0].OperationKey)
			require.True(t, ok)
			require.Equal(t, sig.ID, id)

			counts, err := st.MetricCounts(ctx)
			require.NoError(t, err)
			require.EqualValues(t, 1, counts.ReconciliationsOpen["signal"])
		})
	}
}
