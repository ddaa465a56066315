package ledgertest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

func testDeferredOutcome(t *testing.T, setup setupFunc) {
	t.Run("Delivered", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		d := recordDeferred(t, ctx, s, "ses_a")
		got, err := s.DeferredSetOutcome(ctx, d.ID, ledger.DeferredDelivered, newReceipt("SM1"), "")
		require.NoError(t, err)
		require.Equal(t, ledger.DeferredDelivered, got.Status)
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
		failed, err := s.DeferredSetOutcome(ctx, d.ID, ledger.DeferredFailed, nil, "SES throttled")
		require.NoError(t, err)
		require.Equal(t, ledger.DeferredFailed, failed.Status)
		require.Nil(t, failed.Receipt)
		require.Equal(t, "SES throttled", failed.Reason)

		delivered, err := s.DeferredSetOutcome(ctx, d.ID, ledger.DeferredDelivered, newReceipt("SES-9"), "delivered on retry")
		require.NoError(t, err)
		require.Equal(t, ledger.DeferredDelivered, delivered.Status)
		require.Equal(t, newReceipt("SES-9"), delivered.Receipt)
		require.Equal(t, "delivered on retry", delivered.Reason)
	})

	t.Run("RefusesFromDeliveredOrRepeatedFailure", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		type outcome struct {
			status  ledger.DeferredStatus
			receipt *maestrotype.Receipt
			reason  string
		}
		delivered := outcome{ledger.DeferredDelivered, newReceipt("SM1"), ""}
		failed := outcome{ledger.DeferredFailed, nil, "bounced"}

		for _, tc := range []struct {
			path    []outcome
			refused outcome
		}{
			{[]outcome{delivered}, failed},
			{[]outcome{delivered}, outcome{ledger.DeferredDelivered, newReceipt("SM2"), ""}},
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
			require.ErrorIs(t, err, ledger.ErrDeferredTransition, "%v then %v", tc.path, o)
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
			status  ledger.DeferredStatus
			receipt *maestrotype.Receipt
			reason  string
		}{
			"delivered without a receipt":     {ledger.DeferredDelivered, nil, "sent"},
			"delivered with a receipt, no ID": {ledger.DeferredDelivered, &maestrotype.Receipt{Provider: "ses"}, ""},
			"failed without a reason":         {ledger.DeferredFailed, nil, ""},
			"recorded is not an outcome":      {ledger.DeferredRecorded, nil, "again"},
			"an unknown status is not either": {"exploded", nil, "boom"},
		} {
			_, err := s.DeferredSetOutcome(ctx, d.ID, o.status, o.receipt, o.reason)
			require.Error(t, err, name)
			require.NotErrorIs(t, err, ledger.ErrDeferredTransition, name)
		}
		stored, err := s.DeferredGet(ctx, d.ID)
		require.NoError(t, err)
		require.Equal(t, d, stored)
	})

	t.Run("InsertRefusesDeliveredWithoutReceipt", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.DeferredInsert(ctx, ledger.DeferredItem{
			SessionID: "ses_a", OperationKey: newKey(), Tool: "crm.note", Args: json.RawMessage(`{}`),
			Status: ledger.DeferredDelivered,
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
		require.ErrorIs(t, err, ledger.ErrNotFound)
		_, err = s.DeferredSetOutcome(ctx, "def_missing", ledger.DeferredDelivered, newReceipt("SM1"), "")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}

// recordDeferred records a deferred item in sessionID.
func recordDeferred(t *testing.T, ctx context.Context, s ledger.Store, sessionID string) ledger.DeferredItem {
	t.Helper()
	d, err := s.DeferredInsert(ctx, ledger.DeferredItem{
		SessionID:    sessionID,
		OperationKey: newKey(),
		Tool:         "email.send",
		Args:         oddArgs,
		Reason:       "sent after the call",
	})
	require.NoError(t, err)
	return d
}
