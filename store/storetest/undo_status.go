package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/store"
)

func testUndoStatus(t *testing.T, setup setupFunc) {
	t.Run("Get", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		pushed := pushUndo(t, ctx, s, "ses_a")
		got, err := s.UndoGet(ctx, pushed.ID)
		require.NoError(t, err)
		require.Equal(t, pushed, got)
		require.Equal(t, store.UndoPending, got.Status)
		require.Empty(t, got.Detail)
	})

	t.Run("Moves", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		for _, path := range [][]store.UndoStatus{
			{store.UndoCompensated},
			{store.UndoSkipped},
			{store.UndoFailed},
			// A retry after a human fixed what made the compensation fail.
			{store.UndoFailed, store.UndoCompensated},
			{store.UndoFailed, store.UndoSkipped},
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
			path    []store.UndoStatus
			refused store.UndoStatus
		}{
			{[]store.UndoStatus{store.UndoCompensated}, store.UndoFailed},
			{[]store.UndoStatus{store.UndoCompensated}, store.UndoSkipped},
			{[]store.UndoStatus{store.UndoCompensated}, store.UndoCompensated},
			{[]store.UndoStatus{store.UndoSkipped}, store.UndoCompensated},
			{[]store.UndoStatus{store.UndoSkipped}, store.UndoFailed},
			{[]store.UndoStatus{store.UndoFailed}, store.UndoFailed},
			{[]store.UndoStatus{store.UndoFailed, store.UndoCompensated}, store.UndoFailed},
		} {
			u := pushUndo(t, ctx, s, "ses_a")
			for _, to := range tc.path {
				var err error
				u, err = s.UndoSetStatus(ctx, u.ID, to, "first")
				require.NoError(t, err)
			}

			got, err := s.UndoSetStatus(ctx, u.ID, tc.refused, "second")
			require.ErrorIs(t, err, store.ErrUndoTransition, "%v then %s", tc.path, tc.refused)
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
		for _, to := range []store.UndoStatus{store.UndoPending, "", "exploded"} {
			_, err := s.UndoSetStatus(ctx, u.ID, to, "")
			require.Error(t, err, to)
			require.NotErrorIs(t, err, store.ErrUndoTransition)
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
		second, err := s.UndoSetStatus(ctx, second.ID, store.UndoCompensated, "refund RF1 issued")
		require.NoError(t, err)
		first, err = s.UndoSetStatus(ctx, first.ID, store.UndoFailed, "provider answered 500")
		require.NoError(t, err)

		list, err := s.UndoListBySession(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, []store.UndoEntry{second, first}, list)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.UndoGet(ctx, "undo_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.UndoSetStatus(ctx, "undo_missing", store.UndoCompensated, "")
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// pushUndo claims a fresh effect with an undo entry in sessionID and
// returns the entry.
func pushUndo(t *testing.T, ctx context.Context, s store.Store, sessionID string) store.UndoEntry {
	t.Helper()
	p := claimParams("worker-a", time.Hour)
	p.Undo = &store.UndoEntry{SessionID: sessionID, CompensationTool: "wo.cancel"}
	res, err := s.EffectClaim(ctx, p)
	require.NoError(t, err)
	require.NotNil(t, res.Undo)
	return *res.Undo
}
