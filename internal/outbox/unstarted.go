package outbox

import (
	"context"
	"errors"

	"github.com/maestro-run/maestro/internal/ledger"
)

// workflowStartsLater reports whether a signal Temporal found no workflow
// for is owed to a workflow that has yet to start rather than one that is
// gone: an approval's wake-up to the workflow of an invocation the ledger
// still holds open. Admission lists a gated call's request before it starts
// the call's workflow, so an approver quick enough (or a Temporal slow
// enough to answer the start) decides first; dropping that wake-up would
// leave the approved call waiting out the approval's timeout. Kept owed,
// it is delivered once the workflow runs; were the workflow never started,
// the sweeper finishes the invocation and the next attempt abandons it.
//
// A ledger that cannot say keeps the signal owed too: abandoning cannot be
// undone, and the next attempt asks again.
func (r *Relay) workflowStartsLater(ctx context.Context, sig ledger.OutboxSignal) bool {
	if sig.ApprovalID == "" {
		return false
	}
	req, err := r.cfg.Store.ApprovalRequestGet(ctx, sig.ApprovalID)
	var inv ledger.Invocation
	if err == nil {
		// A compensation's request has no invocation of its own, so none
		// is found: its wake-up goes to the session's workflow, which the
		// session's first call started.
		inv, err = r.cfg.Store.InvocationGet(ctx, req.InvocationID)
	}
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return false
	case err != nil:
		r.cfg.Logger.Error("could not tell whether a signal's workflow is yet to start; keeping it owed", "signal", sig.ID, "err", err)
		return true
	}
	return inv.WorkflowID == sig.WorkflowID && !inv.State.Terminal()
}
