package ledgertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

const callbackURL = "https://agent.example/callbacks"

// pendingInvocation inserts a running invocation that owes a callback.
func pendingInvocation(t *testing.T, ctx context.Context, s ledger.Store) ledger.Invocation {
	t.Helper()
	inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_cb"))
	require.NoError(t, err)
	require.NoError(t, s.CallbackOwe(ctx, inv.ID, inv.AgentID, callbackURL))
	return inv
}

func finish(t *testing.T, ctx context.Context, s ledger.Store, inv ledger.Invocation) {
	t.Helper()
	obs := maestrotype.Observation{Status: maestrotype.StatusSuccess, Summary: "done",
		Source: &maestrotype.Source{System: "twilio", Tool: inv.Tool, OperationKey: inv.OperationKey}}
	require.NoError(t, s.InvocationFinish(ctx, inv.ID, maestrotype.InvocationSucceeded, obs))
}

func callbackIDs(rows []ledger.Callback) []string {
	return ids(rows, func(c ledger.Callback) string { return c.InvocationID })
}

func testCallback(t *testing.T, setup setupFunc) {
	t.Run("OwedOncePerInvocation", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		inv := pendingInvocation(t, ctx, s)
		require.NoError(t, s.CallbackOwe(ctx, inv.ID, inv.AgentID, "https://other.example/cb"), "owing again is a no-op")

		got, err := s.CallbackGet(ctx, inv.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.CallbackPending, got.Status)
		require.Equal(t, callbackURL, got.URL, "the first owing stands")
		require.Equal(t, inv.AgentID, got.AgentID)
		require.Zero(t, got.Attempts)
		require.Nil(t, got.DeliveredAt)
		requireRecent(t, got.CreatedAt)

		_, err = s.CallbackGet(ctx, "inv_missing")
		require.ErrorIs(t, err, ledger.ErrNotFound)
		require.Error(t, s.CallbackOwe(ctx, "", inv.AgentID, callbackURL))
		require.Error(t, s.CallbackOwe(ctx, "inv_missing", inv.AgentID, callbackURL), "only a recorded invocation can owe a callback")
	})

	t.Run("ClaimedOnlyOnceTheInvocationIsFinal", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		running := pendingInvocation(t, ctx, s)
		done := pendingInvocation(t, ctx, s)
		finish(t, ctx, s, done)

		claimed, err := s.CallbackClaimDue(ctx, time.Hour, 0)
		require.NoError(t, err)
		require.Equal(t, []string{done.ID}, callbackIDs(claimed), "a running invocation has nothing to tell yet")

		again, err := s.CallbackClaimDue(ctx, time.Hour, 0)
		require.NoError(t, err)
		require.Empty(t, again, "a claimed callback is not claimed again while its lease lasts")

		finish(t, ctx, s, running)
		claimed, err = s.CallbackClaimDue(ctx, time.Hour, 0)
		require.NoError(t, err)
		require.Equal(t, []string{running.ID}, callbackIDs(claimed))

		_, err = s.CallbackClaimDue(ctx, 0, 0)
		require.Error(t, err, "a claim needs a lease")
	})

	t.Run("FailedAttemptsWaitTheirTurnAndSettledCallbacksStaySettled", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		a, b, c := pendingInvocation(t, ctx, s), pendingInvocation(t, ctx, s), pendingInvocation(t, ctx, s)
		for _, inv := range []ledger.Invocation{a, b, c} {
			finish(t, ctx, s, inv)
		}

		require.NoError(t, s.CallbackMarkFailed(ctx, a.ID, "receiver answered 500", time.Hour))
		require.NoError(t, s.CallbackMarkDelivered(ctx, b.ID))
		require.NoError(t, s.CallbackGiveUp(ctx, c.ID, "receiver answered 500 ten times"))

		got, err := s.CallbackGet(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.CallbackPending, got.Status)
		require.Equal(t, 1, got.Attempts)
		require.Equal(t, "receiver answered 500", got.LastError)
		require.True(t, got.NextAttemptAt.After(time.Now().Add(50*time.Minute)), "the next attempt waits out the backoff")

		got, err = s.CallbackGet(ctx, b.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.CallbackDelivered, got.Status)
		require.Equal(t, 1, got.Attempts)
		require.NotNil(t, got.DeliveredAt)
		requireRecent(t, *got.DeliveredAt)

		got, err = s.CallbackGet(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.CallbackFailed, got.Status)
		require.Equal(t, "receiver answered 500 ten times", got.LastError)

		claimed, err := s.CallbackClaimDue(ctx, time.Hour, 0)
		require.NoError(t, err)
		require.Empty(t, claimed, "nothing is due: one waits, two are settled")

		// A settled callback does not move again.
		require.NoError(t, s.CallbackMarkFailed(ctx, b.ID, "late failure", 0))
		require.NoError(t, s.CallbackMarkDelivered(ctx, c.ID))
		got, err = s.CallbackGet(ctx, b.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.CallbackDelivered, got.Status)
		require.Equal(t, 1, got.Attempts)
		got, err = s.CallbackGet(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.CallbackFailed, got.Status)

		// A failure due at once is claimed again.
		require.NoError(t, s.CallbackMarkFailed(ctx, a.ID, "receiver answered 503", 0))
		claimed, err = s.CallbackClaimDue(ctx, time.Hour, 0)
		require.NoError(t, err)
		require.Equal(t, []string{a.ID}, callbackIDs(claimed))
		require.Equal(t, 2, claimed[0].Attempts)

		require.Error(t, s.CallbackMarkFailed(ctx, a.ID, "x", -time.Second))
		require.Error(t, s.CallbackGiveUp(ctx, a.ID, ""))
	})
}
