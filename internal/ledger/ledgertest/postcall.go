package ledgertest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

func testPostCall(t *testing.T, setup setupFunc) {
	t.Run("UpsertInsertsThenMoves", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		d := recordDeferred(t, ctx, s, "ses_a")
		it := newPostCallItem("ses_a", d.ID)
		it.Status = "" // defaults to pending
		got, err := s.PostCallItemUpsert(ctx, it)
		require.NoError(t, err)
		require.Equal(t, "ses_a", got.SessionID)
		require.Equal(t, d.ID, got.Key)
		require.Equal(t, "email.send", got.Tool)
		require.Equal(t, "deferred:"+d.ID, got.Source)
		require.Equal(t, d.ID, got.DeferredID)
		require.Equal(t, it.OperationKey, got.OperationKey)
		require.Empty(t, got.InvocationID)
		require.Equal(t, ledger.PostCallPending, got.Status)
		require.Nil(t, got.Receipt)
		require.Empty(t, got.Reason)
		requireRecent(t, got.CreatedAt)
		requireRecent(t, got.UpdatedAt)

		// The call waits for an approver. What the item is stays as first
		// recorded; only its progress moves.
		waiting := it
		waiting.Tool, waiting.Source, waiting.OperationKey = "other.tool", "transcript:other#1", "op_other"
		waiting.InvocationID = "inv_1"
		waiting.Status = ledger.PostCallAwaitingApproval
		got, err = s.PostCallItemUpsert(ctx, waiting)
		require.NoError(t, err)
		require.Equal(t, ledger.PostCallAwaitingApproval, got.Status)
		require.Equal(t, "inv_1", got.InvocationID)
		require.Equal(t, "email.send", got.Tool)
		require.Equal(t, "deferred:"+d.ID, got.Source)
		require.Equal(t, it.OperationKey, got.OperationKey)

		// A failure without the invocation keeps the link.
		failed := it
		failed.Status, failed.Reason = ledger.PostCallFailed, "SES throttled"
		got, err = s.PostCallItemUpsert(ctx, failed)
		require.NoError(t, err)
		require.Equal(t, ledger.PostCallFailed, got.Status)
		require.Equal(t, "SES throttled", got.Reason)
		require.Equal(t, "inv_1", got.InvocationID)

		delivered := it
		delivered.Status, delivered.Receipt = ledger.PostCallDelivered, newReceipt("SES-1")
		got, err = s.PostCallItemUpsert(ctx, delivered)
		require.NoError(t, err)
		require.Equal(t, ledger.PostCallDelivered, got.Status)
		require.Equal(t, newReceipt("SES-1"), got.Receipt)
		require.Empty(t, got.Reason, "the failure's reason no longer describes the item")
		require.Equal(t, "inv_1", got.InvocationID)

		list, err := s.PostCallItemList(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, []ledger.PostCallItem{got}, list)
	})

	t.Run("NeverDowngradesADelivery", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		it := newPostCallItem("ses_a", "")
		it.Status, it.Receipt, it.InvocationID = ledger.PostCallDelivered, newReceipt("SM1"), "inv_1"
		delivered, err := s.PostCallItemUpsert(ctx, it)
		require.NoError(t, err)

		for name, mutate := range map[string]func(*ledger.PostCallItem){
			"pending":           func(it *ledger.PostCallItem) { it.Status, it.Receipt = ledger.PostCallPending, nil },
			"failed":            func(it *ledger.PostCallItem) { it.Status, it.Receipt, it.Reason = ledger.PostCallFailed, nil, "late" },
			"awaiting approval": func(it *ledger.PostCallItem) { it.Status, it.Receipt = ledger.PostCallAwaitingApproval, nil },
			"another receipt":   func(it *ledger.PostCallItem) { it.Receipt, it.InvocationID = newReceipt("SM2"), "inv_2" },
		} {
			again := it
			mutate(&again)
			got, err := s.PostCallItemUpsert(ctx, again)
			require.NoError(t, err, name)
			require.Equal(t, delivered, got, "%s: the delivered item comes back unchanged", name)
		}

		list, err := s.PostCallItemList(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, []ledger.PostCallItem{delivered}, list)
	})

	t.Run("ListInCreationOrder", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		var keys []string
		for i := range 3 {
			it := newPostCallItem("ses_a", "")
			it.Key = fmt.Sprintf("transcript:callback_request#%d", 3-i) // not in key order
			_, err := s.PostCallItemUpsert(ctx, it)
			require.NoError(t, err)
			keys = append(keys, it.Key)
		}
		_, err := s.PostCallItemUpsert(ctx, newPostCallItem("ses_b", ""))
		require.NoError(t, err)

		// Updating the first item does not move it.
		first := newPostCallItem("ses_a", "")
		first.Key, first.Status, first.Reason = keys[0], ledger.PostCallFailed, "no callback number"
		_, err = s.PostCallItemUpsert(ctx, first)
		require.NoError(t, err)

		list, err := s.PostCallItemList(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, keys, postCallKeys(list))
		require.Equal(t, ledger.PostCallFailed, list[0].Status)

		none, err := s.PostCallItemList(ctx, "ses_unknown")
		require.NoError(t, err)
		require.NotNil(t, none)
		require.Empty(t, none)
	})

	t.Run("RefusesInvalidItems", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		for name, mutate := range map[string]func(*ledger.PostCallItem){
			"no session":                  func(it *ledger.PostCallItem) { it.SessionID = "" },
			"no key":                      func(it *ledger.PostCallItem) { it.Key = "" },
			"delivered without a receipt": func(it *ledger.PostCallItem) { it.Status = ledger.PostCallDelivered },
			"delivered with a receipt, no ID": func(it *ledger.PostCallItem) {
				it.Status, it.Receipt = ledger.PostCallDelivered, &maestrotype.Receipt{Provider: "ses"}
			},
			"unknown status":          func(it *ledger.PostCallItem) { it.Status = "exploded" },
			"unknown deferred intent": func(it *ledger.PostCallItem) { it.DeferredID = "def_missing" },
		} {
			it := newPostCallItem("ses_a", "")
			mutate(&it)
			_, err := s.PostCallItemUpsert(ctx, it)
			require.Error(t, err, name)
		}

		list, err := s.PostCallItemList(ctx, "ses_a")
		require.NoError(t, err)
		require.Empty(t, list)
	})
}

// newPostCallItem returns a pending item of sessionID. With a deferred ID
// it delivers that intent, keyed by it; without one it came from the
// transcript.
func newPostCallItem(sessionID, deferredID string) ledger.PostCallItem {
	it := ledger.PostCallItem{
		SessionID:    sessionID,
		Key:          "transcript:callback_request#3",
		Tool:         "email.send",
		Source:       "transcript:callback_request#3",
		OperationKey: newKey(),
		Status:       ledger.PostCallPending,
	}
	if deferredID != "" {
		it.Key, it.Source, it.DeferredID = deferredID, "deferred:"+deferredID, deferredID
	}
	return it
}

func postCallKeys(rows []ledger.PostCallItem) []string {
	return ids(rows, func(r ledger.PostCallItem) string { return r.Key })
}
