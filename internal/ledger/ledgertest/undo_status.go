package ledgertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

func testUndoStatus(t *testing.T, setup setupFunc) {
	t.Run("Get", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		pushed := pushUndo(t, ctx, s, "ses_a")
		got, err := s.UndoGet(ctx, pushed.ID)
		require.NoError(t, err)
		require.Equal(t, pushed, got)
		require.Equal(t, ledger.UndoPending, got.Status)
		require.Empty(t, got.Detail)
	})

	t.Run("Moves", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		for _, path := range [][]ledger.UndoStatus{
			{ledger.UndoCompensated},
			{ledger.UndoSkipped},
			{ledger.UndoFailed},
			// A retry after a human fixed what made the compensation fail.
			{ledger.UndoFailed, ledger.UndoCompensated},
			{ledger.UndoFailed, ledger.UndoSkipped},
		} {
			u := pushUndo(t, ctx, s, "ses_a")
			for _, to := range path {
				detail := "now " + string(to)
				got, err := s.UndoSetStatus(ctx, u.ID, to, detail)
				require.NoError(t, err, "%v", path)
				require.Equal(t, to, got.Status)
				require.Equal(t, detail, got.Detail)
				require.Equal(t, u.CreatedAt, got.CreatedAt)
				require.False(t, got.UpdatedAt.Before(u.UpdatedAt))

				stored, err := s.UndoGet(ctx, u.ID)
				require.NoError(t, err)
				require.Equal(t, got, stored)
				u = got
			}
		}
	})

	t.Run("RefusesFromFinalOrRepeatedFailure", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		for _, tc := range []struct {
			path    []ledger.UndoStatus
			refused ledger.UndoStatus
		}{
			{[]ledger.UndoStatus{ledger.UndoCompensated}, ledger.UndoFailed},
			{[]ledger.UndoStatus{ledger.UndoCompensated}, ledger.UndoSkipped},
			{[]ledger.UndoStatus{ledger.UndoCompensated}, ledger.UndoCompensated},
			{[]ledger.UndoStatus{ledger.UndoSkipped}, ledger.UndoCompensated},
			{[]ledger.UndoStatus{ledger.UndoSkipped}, ledger.UndoFailed},
			{[]ledger.UndoStatus{ledger.UndoFailed}, ledger.UndoFailed},
			{[]ledger.UndoStatus{ledger.UndoFailed, ledger.UndoCompensated}, ledger.UndoFailed},
		} {
			u := pushUndo(t, ctx, s, "ses_a")
			for _, to := range tc.path {
				var err error
				u, err = s.UndoSetStatus(ctx, u.ID, to, "first")
				require.NoError(t, err)
			}

			got, err := s.UndoSetStatus(ctx, u.ID, tc.refused, "second")
			require.ErrorIs(t, err, ledger.ErrUndoTransition, "%v then %s", tc.path, tc.refused)
			require.Equal(t, u, got, "a refusal returns the entry as it stands")
			stored, err := s.UndoGet(ctx, u.ID)
			require.NoError(t, err)
			require.Equal(t, u, stored)
		}
	})

	t.Run("RefusesAStatusThatIsNotAnOutcome", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		u := pushUndo(t, ctx, s, "ses_a")
		for _, to := range []ledger.UndoStatus{ledger.UndoPending, "", "exploded"} {
			_, err := s.UndoSetStatus(ctx, u.ID, to, "")
			require.Error(t, err, to)
			require.NotErrorIs(t, err, ledger.ErrUndoTransition)
		}
		stored, err := s.UndoGet(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, u, stored)
	})

	t.Run("ListShowsOutcomesAndStaysLIFO", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		first := pushUndo(t, ctx, s, "ses_a")
		second := pushUndo(t, ctx, s, "ses_a")
		// The saga settles the newest first.
		second, err := s.UndoSetStatus(ctx, second.ID, ledger.UndoCompensated, "refund RF1 issued")
		require.NoError(t, err)
		first, err = s.UndoSetStatus(ctx, first.ID, ledger.UndoFailed, "provider answered 500")
		require.NoError(t, err)

		list, err := s.UndoListBySession(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, []ledger.UndoEntry{second, first}, list)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.UndoGet(ctx, "undo_missing")
		require.ErrorIs(t, err, ledger.ErrNotFound)
		_, err = s.UndoSetStatus(ctx, "undo_missing", ledger.UndoCompensated, "")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}

// pushUndo claims a fresh effect with an undo entry in sessionID and
// returns the entry.
func pushUndo(t *testing.T, ctx context.Context, s ledger.Store, sessionID string) ledger.UndoEntry {
	t.Helper()
	p := claimParams("worker-a", time.Hour)
	p.Undo = &ledger.UndoEntry{SessionID: sessionID, CompensationTool: "wo.cancel"}
	res, err := s.EffectClaim(ctx, p)
	require.NoError(t, err)
	require.NotNil(t, res.Undo)
	return *res.Undo
}
