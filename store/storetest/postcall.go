package storetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/store"
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
		require.Equal(t, store.PostCallPending, got.Status)
		require.Nil(t, got.Receipt)
		require.Empty(t, got.Reason)
		requireRecent(t, got.CreatedAt)
		requireRecent(t, got.UpdatedAt)

		// The call waits for an approver. What the item is stays as first
		// recorded; only its progress moves.
		waiting := it
		waiting.Tool, waiting.Source, waiting.OperationKey = "other.tool", "transcript:other#1", "op_other"
		waiting.InvocationID = "inv_1"
		waiting.Status = store.PostCallAwaitingApproval
		got, err = s.PostCallItemUpsert(ctx, waiting)
		require.NoError(t, err)
		require.Equal(t, store.PostCallAwaitingApproval, got.Status)
		require.Equal(t, "inv_1", got.InvocationID)
		require.Equal(t, "email.send", got.Tool)
		require.Equal(t, "deferred:"+d.ID, got.Source)
		require.Equal(t, it.OperationKey, got.OperationKey)

		// A failure without the invocation keeps the link.
		failed := it
		failed.Status, failed.Reason = store.PostCallFailed, "SES throttled"
		got, err = s.PostCallItemUpsert(ctx, failed)
		require.NoError(t, err)
		require.Equal(t, store.PostCallFailed, got.Status)
		require.Equal(t, "SES throttled", got.Reason)
		require.Equal(t, "inv_1", got.InvocationID)

		delivered := it
		delivered.Status, delivered.Receipt = store.PostCallDelivered, newReceipt("SES-1")
		got, err = s.PostCallItemUpsert(ctx, delivered)
		require.NoError(t, err)
		require.Equal(t, store.PostCallDelivered, got.Status)
		require.Equal(t, newReceipt("SES-1"), got.Receipt)
		require.Empty(t, got.Reason, "the failure's reason no longer describes the item")
		require.Equal(t, "inv_1", got.InvocationID)

		list, err := s.PostCallItemList(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, []store.PostCallItem{got}, list)
	})

	t.Run("NeverDowngradesADelivery", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		it := newPostCallItem("ses_a", "")
		it.Status, it.Receipt, it.InvocationID = store.PostCallDelivered, newReceipt("SM1"), "inv_1"
		delivered, err := s.PostCallItemUpsert(ctx, it)
		require.NoError(t, err)

		for name, mutate := range map[string]func(*store.PostCallItem){
			"pending":           func(it *store.PostCallItem) { it.Status, it.Receipt = store.PostCallPending, nil },
			"failed":            func(it *store.PostCallItem) { it.Status, it.Receipt, it.Reason = store.PostCallFailed, nil, "late" },
			"awaiting approval": func(it *store.PostCallItem) { it.Status, it.Receipt = store.PostCallAwaitingApproval, nil },
			"another receipt":   func(it *store.PostCallItem) { it.Receipt, it.InvocationID = newReceipt("SM2"), "inv_2" },
		} {
			again := it
			mutate(&again)
			got, err := s.PostCallItemUpsert(ctx, again)
			require.NoError(t, err, name)
			require.Equal(t, delivered, got, "%s: the delivered item comes back unchanged", name)
		}

		list, err := s.PostCallItemList(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, []store.PostCallItem{delivered}, list)
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
		first.Key, first.Status, first.Reason = keys[0], store.PostCallFailed, "no callback number"
		_, err = s.PostCallItemUpsert(ctx, first)
		require.NoError(t, err)

		list, err := s.PostCallItemList(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, keys, postCallKeys(list))
		require.Equal(t, store.PostCallFailed, list[0].Status)

		none, err := s.PostCallItemList(ctx, "ses_unknown")
		require.NoError(t, err)
		require.NotNil(t, none)
		require.Empty(t, none)
	})

	t.Run("RefusesInvalidItems", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		for name, mutate := range map[string]func(*store.PostCallItem){
			"no session":                  func(it *store.PostCallItem) { it.SessionID = "" },
			"no key":                      func(it *store.PostCallItem) { it.Key = "" },
			"delivered without a receipt": func(it *store.PostCallItem) { it.Status = store.PostCallDelivered },
			"delivered with a receipt, no ID": func(it *store.PostCallItem) {
				it.Status, it.Receipt = store.PostCallDelivered, &maestrotype.Receipt{Provider: "ses"}
			},
			"unknown status":          func(it *store.PostCallItem) { it.Status = "exploded" },
			"unknown deferred intent": func(it *store.PostCallItem) { it.DeferredID = "def_missing" },
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
func newPostCallItem(sessionID, deferredID string) store.PostCallItem {
	it := store.PostCallItem{
		SessionID:    sessionID,
		Key:          "transcript:callback_request#3",
		Tool:         "email.send",
		Source:       "transcript:callback_request#3",
		OperationKey: newKey(),
		Status:       store.PostCallPending,
	}
	if deferredID != "" {
		it.Key, it.Source, it.DeferredID = deferredID, "deferred:"+deferredID, deferredID
	}
	return it
}

func postCallKeys(rows []store.PostCallItem) []string {
	return ids(rows, func(r store.PostCallItem) string { return r.Key })
}
