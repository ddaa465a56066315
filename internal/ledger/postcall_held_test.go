package ledger_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

// A deferred intent no channel delivered is held, keeps its attempts, is
// listed for ops, and only a delivery moves it on.
func TestHeldPostCallItem(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open, _ := b.setup(t)
			st := open()
			ctx := t.Context()
			require.NoError(t, st.Migrate(ctx))

			def, err := st.DeferredInsert(ctx, ledger.DeferredItem{SessionID: "s1", OperationKey: "s1:msg", Tool: "take_message", Args: json.RawMessage(`{"message":"Gas smell"}`)})
			require.NoError(t, err)
			attempts := json.RawMessage(`[{"n":0,"outcome":"refused"},{"n":1,"outcome":"unavailable"}]`)
			base := ledger.PostCallItem{SessionID: "s1", Key: def.ID, Tool: "deliver_message", Source: "deferred:" + def.ID, DeferredID: def.ID, OperationKey: "postcall:s1:" + def.ID}

			pending := base
			pending.Status, pending.Attempts, pending.Item = ledger.PostCallPending, json.RawMessage(`[{"n":0,"outcome":"refused"}]`), json.RawMessage(`{"key":"`+def.ID+`"}`)
			_, err = st.PostCallItemUpsert(ctx, pending)
			require.NoError(t, err)
			held := base
			held.Status, held.Reason, held.Attempts = ledger.PostCallHeld, "no channel delivered it", attempts
			got, err := st.PostCallItemUpsert(ctx, held)
			require.NoError(t, err)
			require.JSONEq(t, string(attempts), string(got.Attempts))
			require.JSONEq(t, `{"key":"`+def.ID+`"}`, string(got.Item), "an upsert without the item keeps it")

			list, err := st.PostCallItemListHeld(ctx, 10)
			require.NoError(t, err)
			require.Len(t, list, 1)
			require.Equal(t, def.ID, list[0].Key)

			d, err := st.DeferredSetOutcome(ctx, def.ID, ledger.DeferredHeld, nil, "no channel delivered it")
			require.NoError(t, err)
			require.Equal(t, ledger.DeferredHeld, d.Status)
			_, err = st.DeferredSetOutcome(ctx, def.ID, ledger.DeferredFailed, nil, "later failure")
			require.ErrorIs(t, err, ledger.ErrDeferredTransition, "held moves only to delivered")
			receipt := &maestrotype.Receipt{Provider: "human-attested", ID: "att_1"}
			d, err = st.DeferredSetOutcome(ctx, def.ID, ledger.DeferredDelivered, receipt, "")
			require.NoError(t, err)
			require.Equal(t, ledger.DeferredDelivered, d.Status)

			delivered := base
			delivered.Status, delivered.Receipt = ledger.PostCallDelivered, receipt
			_, err = st.PostCallItemUpsert(ctx, delivered)
			require.NoError(t, err)
			list, err = st.PostCallItemListHeld(ctx, 10)
			require.NoError(t, err)
			require.Empty(t, list)
			got, err = st.PostCallItemGet(ctx, "s1", def.ID)
			require.NoError(t, err)
			require.JSONEq(t, string(attempts), string(got.Attempts), "the attempts stay on record")
		})
	}
}
