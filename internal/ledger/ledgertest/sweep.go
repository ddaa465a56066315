package ledgertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

func testSweep(t *testing.T, setup setupFunc) {
	t.Run("ListsOnlyInProgressEffectsPastTheirLease", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		// A nanosecond lease has expired by the next statement.
		expired := claimParams("worker-a", time.Nanosecond)
		_, err := s.EffectClaim(ctx, expired)
		require.NoError(t, err)
		live := claimParams("worker-b", time.Hour)
		_, err = s.EffectClaim(ctx, live)
		require.NoError(t, err)
		settled := claimParams("worker-c", time.Nanosecond)
		_, err = s.EffectClaim(ctx, settled)
		require.NoError(t, err)
		require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
			OperationKey: settled.OperationKey, Owner: "worker-c", Status: maestrotype.EffectFailed, Error: "refused",
		}))

		got, err := s.EffectListLeaseExpired(ctx, 0)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, expired.OperationKey, got[0].OperationKey)
		require.Equal(t, "worker-a", got[0].LeaseOwner)

		// The sweeper moves it by its stale owner's lease; a takeover
		// would have fenced the sweeper out.
		_, err = s.EffectReconcile(ctx, escalation(expired.OperationKey, "worker-a"))
		require.NoError(t, err)
		got, err = s.EffectListLeaseExpired(ctx, 0)
		require.NoError(t, err)
		require.Empty(t, got)
	})

	t.Run("ListsOpenInvocationsIdleLongEnough", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		running, _, err := s.InvocationInsert(ctx, newInvocation("ses_sweep"))
		require.NoError(t, err)
		waiting := newInvocation("ses_sweep")
		waiting.Route, waiting.State = maestrotype.RouteGated, maestrotype.InvocationAwaitingApproval
		waiting, _, err = s.InvocationInsert(ctx, waiting)
		require.NoError(t, err)
		done, _, err := s.InvocationInsert(ctx, newInvocation("ses_sweep"))
		require.NoError(t, err)
		require.NoError(t, s.InvocationFinish(ctx, done.ID, maestrotype.InvocationSucceeded, maestrotype.Observation{Status: maestrotype.StatusSuccess}))

		got, err := s.InvocationListOpen(ctx, 0, 0)
		require.NoError(t, err)
		ids := make([]string, len(got))
		for i, inv := range got {
			ids[i] = inv.ID
		}
		require.ElementsMatch(t, []string{running.ID, waiting.ID}, ids)

		got, err = s.InvocationListOpen(ctx, time.Hour, 0)
		require.NoError(t, err)
		require.Empty(t, got, "nothing has been idle for an hour")

		_, err = s.InvocationListOpen(ctx, -time.Second, 0)
		require.Error(t, err)
	})

	t.Run("FinishOpenNeverOverwritesAnOutcome", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_sweep"))
		require.NoError(t, err)
		first := maestrotype.Observation{Status: maestrotype.StatusError, Summary: "the workflow ended"}
		require.NoError(t, s.InvocationFinishOpen(ctx, inv.ID, maestrotype.InvocationFailed, first))

		err = s.InvocationFinishOpen(ctx, inv.ID, maestrotype.InvocationSucceeded, maestrotype.Observation{Status: maestrotype.StatusSuccess})
		require.ErrorIs(t, err, ledger.ErrInvocationFinal)
		got, err := s.InvocationGet(ctx, inv.ID)
		require.NoError(t, err)
		require.Equal(t, maestrotype.InvocationFailed, got.State)
		require.Equal(t, "the workflow ended", got.Observation.Summary)

		err = s.InvocationFinishOpen(ctx, "inv_missing", maestrotype.InvocationFailed, first)
		require.ErrorIs(t, err, ledger.ErrNotFound)
		err = s.InvocationFinishOpen(ctx, inv.ID, maestrotype.InvocationRunning, first)
		require.Error(t, err)
	})
}
