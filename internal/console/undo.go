package console

import (
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// undoRow is one undo entry with what it is, in words: "pending" alone
// reads as a cancellation under way when the entry only stands ready.
type undoRow struct {
	apitype.UndoEntry
	// Reads is what the entry is now, e.g. "undo available: cancel_refund".
	Reads string
}

// undoRows reads each entry of s's undo stack, in the stack's order,
// against the call it undoes and the session's rollback.
func undoRows(s apitype.Session, entries []apitype.UndoEntry) []undoRow {
	calls := make(map[string]mt.InvocationState, len(s.Calls))
	for _, c := range s.Calls {
		calls[c.OperationKey] = c.State
	}
	rows := make([]undoRow, 0, len(entries))
	for _, u := range entries {
		rows = append(rows, undoRow{UndoEntry: u, Reads: undoReads(u, calls, s.RollbackStartedAt != nil)})
	}
	return rows
}

// undoReads says what entry u is. A pending entry is pushed before its
// effect runs, so it is an undo ready to run only once the call took
// effect, and a cancellation under way only while a rollback runs.
func undoReads(u apitype.UndoEntry, calls map[string]mt.InvocationState, rollingBack bool) string {
	switch ledger.UndoStatus(u.Status) {
	case ledger.UndoCompensated:
		return "undone by " + u.Tool
	case ledger.UndoSkipped:
		return "nothing to undo: the call never took effect"
	case ledger.UndoFailed:
		return "undo failed: " + u.Tool
	case ledger.UndoPending:
	default:
		return u.Tool + " " + u.Status
	}
	switch {
	case u.Detail != "":
		// A rollback reached the entry and could not run it yet; the
		// detail says why.
		return "undo held: " + u.Tool
	case rollingBack:
		return "undo under way: " + u.Tool
	}
	state, known := calls[u.OperationKey]
	switch {
	case !known, state == mt.InvocationSucceeded:
		return "undo available: " + u.Tool
	case state == mt.InvocationNeedsReconciliation:
		return "undo ready if the call took effect (held for reconciliation): " + u.Tool
	case state.Terminal():
		return "nothing to undo: the call ended " + string(state)
	default:
		return "undo ready if the call takes effect: " + u.Tool
	}
}
