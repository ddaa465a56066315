package console

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

func TestUndoEntryReadsAsWhatItIs(t *testing.T) {
	t.Parallel()
	calls := map[string]mt.InvocationState{
		"refund":  mt.InvocationSucceeded,
		"waiting": mt.InvocationAwaitingApproval,
		"refused": mt.InvocationRejected,
		"lost":    mt.InvocationNeedsReconciliation,
	}
	entry := func(key, status, detail string) apitype.UndoEntry {
		return apitype.UndoEntry{OperationKey: key, Tool: "cancel_refund", Status: status, Detail: detail}
	}
	cases := []struct {
		entry       apitype.UndoEntry
		rollingBack bool
		want        string
	}{
		{entry("refund", "pending", ""), false, "undo available: cancel_refund"},
		{entry("waiting", "pending", ""), false, "undo ready if the call takes effect: cancel_refund"},
		{entry("refused", "pending", ""), false, "nothing to undo: the call ended rejected"},
		{entry("lost", "pending", ""), false, "undo ready if the call took effect (held for reconciliation): cancel_refund"},
		{entry("refund", "pending", ""), true, "undo under way: cancel_refund"},
		{entry("refund", "pending", "the back office did not answer"), true, "undo held: cancel_refund"},
		{entry("refund", "compensated", ""), false, "undone by cancel_refund"},
		{entry("refund", "skipped", ""), false, "nothing to undo: the call never took effect"},
		{entry("refund", "failed", "refused"), false, "undo failed: cancel_refund"},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, undoReads(tc.entry, calls, tc.rollingBack), "%+v rolling back %v", tc.entry, tc.rollingBack)
	}
}
