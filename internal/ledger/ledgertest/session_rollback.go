package ledgertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

func testSessionRollback(t *testing.T, setup setupFunc) {
	t.Run("RollbackRefusesNewClaimsUntilItEnds", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		newSession(t, s, "ses_a")

		inFlight := claimParams("worker-a", time.Hour)
		inFlight.SessionID = "ses_a"
		inFlight.Undo = &ledger.UndoEntry{SessionID: "ses_a", CompensationTool: "wo.cancel"}
		first, err := s.EffectClaim(ctx, inFlight)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimNew, first.Outcome)

		begun, err := s.SessionRollbackBegin(ctx, "ses_a")
		require.NoError(t, err)
		require.NotNil(t, begun.RollbackStartedAt)
		require.Equal(t, maestrotype.SessionActive, begun.State, "being rolled back is not a stored state")
		again, err := s.SessionRollbackBegin(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, begun.RollbackStartedAt, again.RollbackStartedAt, "a second begin keeps the first mark")

		late := claimParams("worker-b", time.Hour)
		late.SessionID = "ses_a"
		late.Undo = &ledger.UndoEntry{SessionID: "ses_a", CompensationTool: "wo.cancel"}
		res, err := s.EffectClaim(ctx, late)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimSessionClosed, res.Outcome)
		_, err = s.EffectGet(ctx, late.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound, "nothing was claimed")
		undo, err := s.UndoListBySession(ctx, "ses_a")
		require.NoError(t, err)
		require.Len(t, undo, 1, "and no undo entry pushed")

		// The call claimed before the rollback goes on; so does a
		// compensation, which names no session.
		inFlight.Owner = "worker-a"
		busy, err := s.EffectClaim(ctx, inFlight)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimBusy, busy.Outcome)
		comp := claimParams("worker-c", time.Hour)
		res, err = s.EffectClaim(ctx, comp)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimNew, res.Outcome)

		ended, err := s.SessionRollbackEnd(ctx, "ses_a")
		require.NoError(t, err)
		require.Nil(t, ended.RollbackStartedAt)
		res, err = s.EffectClaim(ctx, late)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimNew, res.Outcome, "the session is open again")
	})

	t.Run("HaltEndsTheRollbackAndRetryResumesIt", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		newSession(t, s, "ses_a")
		_, err := s.SessionRollbackBegin(ctx, "ses_a")
		require.NoError(t, err)

		halted, err := s.SessionHalt(ctx, "ses_a", haltStep, "still in progress")
		require.NoError(t, err)
		require.Nil(t, halted.RollbackStartedAt, "the halt refuses calls from now on")

		retried, err := s.SessionResolve(ctx, "ses_a", operator, "the work order came back", ledger.ResolvedRetry)
		require.NoError(t, err)
		require.Equal(t, maestrotype.SessionActive, retried.State)
		require.Equal(t, ledger.ResolvedRetry, retried.Resolution)
		require.NotNil(t, retried.RollbackStartedAt, "no call slips in before the retried rollback begins")

		_, err = s.SessionResolve(ctx, "ses_a", operator, "why", ledger.Resolution("maybe"))
		require.ErrorContains(t, err, "neither")
	})

	t.Run("ResolvedByHandClosesTheEntriesTheRollbackCouldNotRun", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		newSession(t, s, "ses_a")
		entries := make([]ledger.UndoEntry, 3)
		for i := range entries {
			p := claimParams("worker-a", time.Hour)
			p.Undo = &ledger.UndoEntry{SessionID: "ses_a", CompensationTool: "wo.cancel"}
			res, err := s.EffectClaim(ctx, p)
			require.NoError(t, err)
			entries[i] = *res.Undo
		}
		untried, held, failed := entries[0], entries[1], entries[2]
		_, err := s.UndoSetStatus(ctx, held.ID, ledger.UndoPending, "its effect was still in progress")
		require.NoError(t, err)
		_, err = s.UndoSetStatus(ctx, held.ID, ledger.UndoPending, "")
		require.Error(t, err, "a held entry says why")
		_, err = s.UndoSetStatus(ctx, failed.ID, ledger.UndoFailed, "provider refused")
		require.NoError(t, err)
		_, err = s.UndoSetStatus(ctx, failed.ID, ledger.UndoPending, "again")
		require.ErrorIs(t, err, ledger.ErrUndoTransition, "a failed entry is not held")
		_, err = s.SessionHalt(ctx, "ses_a", haltStep, "provider refused")
		require.NoError(t, err)

		resolved, err := s.SessionResolve(ctx, "ses_a", operator, "cancelled both by phone", ledger.ResolvedByHand)
		require.NoError(t, err)
		require.Equal(t, ledger.ResolvedByHand, resolved.Resolution)
		require.Nil(t, resolved.RollbackStartedAt)
		for _, want := range []struct {
			id     string
			status ledger.UndoStatus
		}{{untried.ID, ledger.UndoPending}, {held.ID, ledger.UndoCompensated}, {failed.ID, ledger.UndoCompensated}} {
			got, err := s.UndoGet(ctx, want.id)
			require.NoError(t, err)
			require.Equal(t, want.status, got.Status, got.ID)
			if want.status == ledger.UndoCompensated {
				require.Equal(t, "compensated by hand ("+operator+"): cancelled both by phone", got.Detail)
			}
		}
	})
}
