package ledgertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

func testConsoleSession(t *testing.T, setup setupFunc) {
	t.Run("CreateGetDelete", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		want := ledger.ConsoleSession{IDHash: randomHex(32), OperatorID: "manager", CSRFToken: randomHex(16), KeyBinding: randomHex(32), ExpiresAt: time.Now().Add(time.Hour).UTC()}
		require.NoError(t, s.ConsoleSessionCreate(ctx, want))

		got, err := s.ConsoleSessionGet(ctx, want.IDHash)
		require.NoError(t, err)
		require.Equal(t, want.OperatorID, got.OperatorID)
		require.Equal(t, want.CSRFToken, got.CSRFToken)
		require.Equal(t, want.KeyBinding, got.KeyBinding)
		require.WithinDuration(t, want.ExpiresAt, got.ExpiresAt, time.Millisecond)
		require.False(t, got.CreatedAt.IsZero())

		require.NoError(t, s.ConsoleSessionDelete(ctx, want.IDHash))
		_, err = s.ConsoleSessionGet(ctx, want.IDHash)
		require.ErrorIs(t, err, ledger.ErrNotFound, "a signed-out session is gone")
		require.NoError(t, s.ConsoleSessionDelete(ctx, want.IDHash), "signing out twice is a no-op")
	})

	t.Run("ExpiredReadsAsAbsent", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		old := ledger.ConsoleSession{IDHash: randomHex(32), OperatorID: "ops", CSRFToken: randomHex(16), KeyBinding: randomHex(32), ExpiresAt: time.Now().Add(-time.Second)}
		require.NoError(t, s.ConsoleSessionCreate(ctx, old))
		_, err := s.ConsoleSessionGet(ctx, old.IDHash)
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})

	t.Run("RefusesBadInput", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		err := s.ConsoleSessionCreate(ctx, ledger.ConsoleSession{IDHash: randomHex(32), ExpiresAt: time.Now().Add(time.Hour)})
		require.ErrorContains(t, err, "are required")
		err = s.ConsoleSessionCreate(ctx, ledger.ConsoleSession{IDHash: randomHex(32), OperatorID: "ops", CSRFToken: "x", ExpiresAt: time.Now().Add(time.Hour)})
		require.ErrorContains(t, err, "key binding are required", "a session must name the key it was signed in with")
		err = s.ConsoleSessionCreate(ctx, ledger.ConsoleSession{IDHash: randomHex(32), OperatorID: "ops", CSRFToken: "x", KeyBinding: "k"})
		require.ErrorContains(t, err, "an expiry is required")
		dup := ledger.ConsoleSession{IDHash: randomHex(32), OperatorID: "ops", CSRFToken: "x", KeyBinding: "k", ExpiresAt: time.Now().Add(time.Hour)}
		require.NoError(t, s.ConsoleSessionCreate(ctx, dup))
		require.Error(t, s.ConsoleSessionCreate(ctx, dup), "a session token is never reused")
	})
}
