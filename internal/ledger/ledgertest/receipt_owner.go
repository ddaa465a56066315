package ledgertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

// httpReceipt is an HTTP service's receipt: its ID names a resource, which
// several effects may act on.
func httpReceipt(id string) *maestrotype.Receipt {
	return &maestrotype.Receipt{Provider: "http:sandbox", ID: id, Status: "open", Fields: map[string]string{maestrotype.ReceiptResourceID: id}}
}

func testReceiptOwner(t *testing.T, setup setupFunc) {
	// claim opens an in-progress effect held by owner.
	claim := func(t *testing.T, s ledger.Store, owner string) string {
		p := claimParams(owner, time.Hour)
		_, err := s.EffectClaim(t.Context(), p)
		require.NoError(t, err)
		return p.OperationKey
	}
	adopt := func(key, owner string, r *maestrotype.Receipt) ledger.EffectReconcileParams {
		return ledger.EffectReconcileParams{
			OperationKey: key, Owner: owner, Status: maestrotype.EffectSucceeded, Receipt: r,
			Result: &maestrotype.Observation{Status: maestrotype.StatusSuccess, Summary: "found"},
			Event:  ledger.ReconciliationEvent{Kind: ledger.ReconciliationAdopted, Actor: "reconciler:" + owner, Reason: "one match", Receipt: r},
		}
	}

	t.Run("SecondAdoptionOfARecordIsRefusedInItsTransaction", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		first, second := claim(t, s, "worker-a"), claim(t, s, "worker-b")

		_, err := s.EffectReconcile(ctx, adopt(first, "worker-a", newReceipt("SM_one")))
		require.NoError(t, err)
		_, err = s.EffectReconcile(ctx, adopt(second, "worker-b", newReceipt("SM_one")))
		require.ErrorIs(t, err, ledger.ErrReceiptTaken)

		eff, err := s.EffectGet(ctx, second)
		require.NoError(t, err)
		require.Equal(t, maestrotype.EffectInProgress, eff.Status, "nothing moved")
		require.Nil(t, eff.Receipt)
		requireEvents(t, ctx, s, second, nil, "a refused adoption logs nothing")

		// The refused attempt still holds its claim and can hold it for a human.
		_, err = s.EffectReconcile(ctx, escalation(second, "worker-b"))
		require.NoError(t, err)
	})

	t.Run("SettleWithATakenReceiptIsRefused", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		first, second := claim(t, s, "worker-a"), claim(t, s, "worker-a")
		settle := func(key string, r *maestrotype.Receipt) error {
			return s.EffectSettle(ctx, ledger.EffectSettleParams{OperationKey: key, Owner: "worker-a", Status: maestrotype.EffectSucceeded, Receipt: r})
		}
		require.NoError(t, settle(first, newReceipt("SM_two")))
		require.ErrorIs(t, settle(second, newReceipt("SM_two")), ledger.ErrReceiptTaken)
		eff, err := s.EffectGet(ctx, second)
		require.NoError(t, err)
		require.Equal(t, maestrotype.EffectInProgress, eff.Status)
	})

	t.Run("OnlyTheSameProviderAndIDConflict", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		settle := func(r *maestrotype.Receipt) {
			key := claim(t, s, "worker-a")
			require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{OperationKey: key, Owner: "worker-a", Status: maestrotype.EffectSucceeded, Receipt: r}), r)
		}
		settle(newReceipt("ID_1"))
		other := newReceipt("ID_1")
		other.Provider = "ses"
		settle(other)
		settle(newReceipt("ID_2"))
		// HTTP receipts name the resource acted on: creating a work order
		// and cancelling it are two effects with one resource ID.
		settle(httpReceipt("wo_1"))
		settle(httpReceipt("wo_1"))
	})
}

func testEffectHandOver(t *testing.T, setup setupFunc) {
	t.Run("OnlyTheNamedAttemptTakesTheClaimOver", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		p := claimParams("attempt-1", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.NoError(t, s.EffectHandOver(ctx, p.OperationKey, "attempt-1", "attempt-2", time.Hour))

		for _, owner := range []string{"attempt-1", "someone-else"} {
			other := p
			other.Owner = owner
			res, err := s.EffectClaim(ctx, other)
			require.NoError(t, err)
			require.Equal(t, ledger.ClaimBusy, res.Outcome, owner)
		}
		next := p
		next.Owner = "attempt-2"
		res, err := s.EffectClaim(ctx, next)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimTakeover, res.Outcome, "at once, long before the lease ends")
		require.Equal(t, "attempt-2", res.Effect.LeaseOwner)
		require.Equal(t, maestrotype.EffectInProgress, res.Effect.Status, "the claim was kept")
		require.Equal(t, 2, res.Effect.Attempts)
	})

	t.Run("ExpiredHandOverIsTakenOverByAnyone", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		p := claimParams("attempt-1", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.NoError(t, s.EffectHandOver(ctx, p.OperationKey, "attempt-1", "attempt-2", time.Millisecond))
		other := p
		other.Owner = "sweeper"
		require.Eventually(t, func() bool {
			res, err := s.EffectClaim(ctx, other)
			return err == nil && res.Outcome == ledger.ClaimTakeover
		}, 5*time.Second, 5*time.Millisecond)
	})

	t.Run("RefusesAnotherOwnerAndBadInput", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		p := claimParams("worker-a", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.ErrorIs(t, s.EffectHandOver(ctx, p.OperationKey, "worker-b", "worker-c", time.Second), ledger.ErrLeaseLost)
		require.ErrorIs(t, s.EffectHandOver(ctx, "op_missing", "worker-a", "worker-c", time.Second), ledger.ErrLeaseLost)
		require.Error(t, s.EffectHandOver(ctx, p.OperationKey, "worker-a", "worker-c", 0))
		require.Error(t, s.EffectHandOver(ctx, p.OperationKey, "worker-a", "", time.Second))

		require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectFailed}))
		require.ErrorIs(t, s.EffectHandOver(ctx, p.OperationKey, "worker-a", "worker-c", time.Second), ledger.ErrLeaseLost, "a settled effect has no lease")
	})
}
