package outbox_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/outbox"
)

// AwaitDrained returns once the relay has delivered what was queued, and
// names what is still owed when it runs out of time.
func TestAwaitDrained(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	ctx := t.Context()
	require.NoError(t, outbox.AwaitDrained(ctx, st, time.Millisecond), "an empty outbox is drained")

	sig, err := st.OutboxInsert(ctx, ledger.OutboxSignal{WorkflowID: "session/s1", SignalName: "call-ended", Payload: json.RawMessage(`{}`)})
	require.NoError(t, err)
	err = outbox.AwaitDrained(ctx, st, 20*time.Millisecond)
	require.ErrorContains(t, err, "the outbox still owes 1 or more signals after 20ms")

	relay := newRelay(t, st, &recorder{})
	go func() { _ = relay.Deliver(ctx, sig) }()
	require.NoError(t, outbox.AwaitDrained(ctx, st, 10*time.Second))
	got, err := st.OutboxGet(ctx, sig.ID)
	require.NoError(t, err)
	require.NotNil(t, got.DeliveredAt)
}
