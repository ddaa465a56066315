package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/store"
)

func testReceiptStatus(t *testing.T, setup func(*testing.T) (store.Store, context.Context)) {
	t.Run("UpdatesOnlyTheMatchingReceiptsStatus", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		settle := func(receiptID string) string {
			p := claimParams("worker-a", time.Hour)
			_, err := s.EffectClaim(ctx, p)
			require.NoError(t, err)
			require.NoError(t, s.EffectSettle(ctx, store.EffectSettleParams{
				OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectSucceeded, Receipt: newReceipt(receiptID),
			}))
			return p.OperationKey
		}
		key := settle("SM_callback")
		other := settle("SM_untouched")

		got, err := s.EffectReceiptStatusUpdate(ctx, "SM_callback", "delivered")
		require.NoError(t, err)
		require.Equal(t, []string{key}, effectKeys(got))

		want := newReceipt("SM_callback")
		want.Status = "delivered"
		eff, err := s.EffectGet(ctx, key)
		require.NoError(t, err)
		require.Equal(t, want, eff.Receipt, "only the status moved")
		require.Equal(t, maestrotype.EffectSucceeded, eff.Status, "the effect itself is settled already")

		untouched, err := s.EffectGet(ctx, other)
		require.NoError(t, err)
		require.Equal(t, newReceipt("SM_untouched"), untouched.Receipt)
	})

	t.Run("UnknownReceiptUpdatesNothing", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		got, err := s.EffectReceiptStatusUpdate(ctx, "SM_never_claimed", "delivered")
		require.NoError(t, err)
		require.Empty(t, got)

		_, err = s.EffectReceiptStatusUpdate(ctx, "", "delivered")
		require.Error(t, err)
		_, err = s.EffectReceiptStatusUpdate(ctx, "SM_x", "")
		require.Error(t, err)
	})
}
