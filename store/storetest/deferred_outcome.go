package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/store"
)

func testDeferredOutcome(t *testing.T, setup setupFunc) {
	t.Run("Delivered", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		d := recordDeferred(t, ctx, s, "ses_a")
		got, err := s.DeferredSetOutcome(ctx, d.ID, store.DeferredDelivered, newReceipt("SM1"), "")
		require.NoError(t, err)
		require.Equal(t, store.DeferredDelivered, got.Status)
		require.Equal(t, newReceipt("SM1"), got.Receipt)
		require.Equal(t, d.Reason, got.Reason, "a delivery without a reason keeps the recorded one")
		require.Equal(t, d.CreatedAt, got.CreatedAt)
		require.False(t, got.UpdatedAt.Before(d.UpdatedAt))
		require.Equal(t, string(d.Args), string(got.Args))

		stored, err := s.DeferredGet(ctx, d.ID)
		require.NoError(t, err)
		require.Equal(t, got, stored)
	})

	t.Run("FailedThenDeliveredByARetry", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		d := recordDeferred(t, ctx, s, "ses_a")
		failed, err := s.DeferredSetOutcome(ctx, d.ID, store.DeferredFailed, nil, "SES throttled")
		require.NoError(t, err)
		require.Equal(t, store.DeferredFailed, failed.Status)
		require.Nil(t, failed.Receipt)
		require.Equal(t, "SES throttled", failed.Reason)

		delivered, err := s.DeferredSetOutcome(ctx, d.ID, store.DeferredDelivered, newReceipt("SES-9"), "delivered on retry")
		require.NoError(t, err)
		require.Equal(t, store.DeferredDelivered, delivered.Status)
		require.Equal(t, newReceipt("SES-9"), delivered.Receipt)
		require.Equal(t, "delivered on retry", delivered.Reason)
	})

	t.Run("RefusesFromDeliveredOrRepeatedFailure", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		type outcome struct {
			status  store.DeferredStatus
			receipt *maestrotype.Receipt
			reason  string
		}
		delivered := outcome{store.DeferredDelivered, newReceipt("SM1"), ""}
		failed := outcome{store.DeferredFailed, nil, "bounced"}

		for _, tc := range []struct {
			path    []outcome
			refused outcome
		}{
			{[]outcome{delivered}, failed},
			{[]outcome{delivered}, outcome{store.DeferredDelivered, newReceipt("SM2"), ""}},
			{[]outcome{failed}, failed},
			{[]outcome{failed, delivered}, failed},
		} {
			d := recordDeferred(t, ctx, s, "ses_a")
			for _, o := range tc.path {
				var err error
				d, err = s.DeferredSetOutcome(ctx, d.ID, o.status, o.receipt, o.reason)
				require.NoError(t, err)
			}

			o := tc.refused
			got, err := s.DeferredSetOutcome(ctx, d.ID, o.status, o.receipt, o.reason)
			require.ErrorIs(t, err, store.ErrDeferredTransition, "%v then %v", tc.path, o)
			require.Equal(t, d, got, "a refusal returns the item as it stands")
			stored, err := s.DeferredGet(ctx, d.ID)
			require.NoError(t, err)
			require.Equal(t, d, stored)
		}
	})

	t.Run("RefusesAnOutcomeWithoutItsProof", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		d := recordDeferred(t, ctx, s, "ses_a")
		for name, o := range map[string]struct {
			status  store.DeferredStatus
			receipt *maestrotype.Receipt
			reason  string
		}{
			"delivered without a receipt":     {store.DeferredDelivered, nil, "sent"},
			"delivered with a receipt, no ID": {store.DeferredDelivered, &maestrotype.Receipt{Provider: "ses"}, ""},
			"failed without a reason":         {store.DeferredFailed, nil, ""},
			"recorded is not an outcome":      {store.DeferredRecorded, nil, "again"},
			"an unknown status is not either": {"exploded", nil, "boom"},
		} {
			_, err := s.DeferredSetOutcome(ctx, d.ID, o.status, o.receipt, o.reason)
			require.Error(t, err, name)
			require.NotErrorIs(t, err, store.ErrDeferredTransition, name)
		}
		stored, err := s.DeferredGet(ctx, d.ID)
		require.NoError(t, err)
		require.Equal(t, d, stored)
	})

	t.Run("InsertRefusesDeliveredWithoutReceipt", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.DeferredInsert(ctx, store.DeferredItem{
			SessionID: "ses_a", OperationKey: newKey(), Tool: "crm.note", Args: json.RawMessage(`{}`),
			Status: store.DeferredDelivered,
		})
		require.Error(t, err)
		list, err := s.DeferredListBySession(ctx, "ses_a")
		require.NoError(t, err)
		require.Empty(t, list)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.DeferredGet(ctx, "def_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.DeferredSetOutcome(ctx, "def_missing", store.DeferredDelivered, newReceipt("SM1"), "")
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// recordDeferred records a deferred item in sessionID.
func recordDeferred(t *testing.T, ctx context.Context, s store.Store, sessionID string) store.DeferredItem {
	t.Helper()
	d, err := s.DeferredInsert(ctx, store.DeferredItem{
		SessionID:    sessionID,
		OperationKey: newKey(),
		Tool:         "email.send",
		Args:         oddArgs,
		Reason:       "sent after the call",
	})
	require.NoError(t, err)
	return d
}
