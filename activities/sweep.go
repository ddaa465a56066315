package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/enums/v1"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/workflows"
)

// sweepBatch bounds the rows one sweep looks at; the next sweep takes the
// rest.
const sweepBatch = 200

// Sweep finishes what ended without finishing. It runs on a schedule and:
//   - holds for reconciliation every effect left in progress past its
//     lease whose workflow no longer runs, with an event saying why, and
//     finishes its invocation needs_reconciliation: the provider may have
//     acted, so nothing is resent before someone looks;
//   - finishes every invocation left open for SweepIdle whose workflow no
//     longer runs, from what the ledger knows of its effect (see
//     FinalizeStranded).
//
// A workflow that still runs is left alone: its own retries take a stale
// lease over and reconcile it.
func (a *Activities) Sweep(ctx context.Context) (workflows.SweepResult, error) {
	var res workflows.SweepResult
	effs, err := a.cfg.Store.EffectListLeaseExpired(ctx, sweepBatch)
	if err != nil {
		return res, retryable(ErrTypeLedger, err)
	}
	for _, eff := range effs {
		held, finished, err := a.sweepEffect(ctx, eff)
		if err != nil {
			a.cfg.Logger.Warn("sweep could not settle a stranded effect", "operation_key", eff.OperationKey, "err", err)
		}
		if held {
			res.Held++
		}
		if finished {
			res.Finished++
		}
	}
	invs, err := a.cfg.Store.InvocationListOpen(ctx, a.cfg.SweepIdle, sweepBatch)
	if err != nil {
		return res, retryable(ErrTypeLedger, err)
	}
	for _, inv := range invs {
		got, err := a.FinalizeStranded(ctx, inv.ID)
		switch {
		case errors.Is(err, ErrWorkflowRunning), errors.Is(err, ErrLeaseLive):
		case err != nil:
			a.cfg.Logger.Warn("sweep could not finish a stranded invocation", "invocation", inv.ID, "err", err)
		case got.State.Terminal():
			res.Finished++
		}
	}
	if res.Held > 0 || res.Finished > 0 {
		a.cfg.Logger.Warn("sweep finished stranded work", "held", res.Held, "finished", res.Finished)
	}
	return res, nil
}

// sweepEffect holds one effect whose lease expired, if its workflow no
// longer runs. An invocation's effect goes through FinalizeStranded with
// its invocation; a compensation's belongs to its session's workflow.
func (a *Activities) sweepEffect(ctx context.Context, eff ledger.Effect) (held, finished bool, err error) {
	if eff.InvocationID != "" {
		inv, err := a.cfg.Store.InvocationGet(ctx, eff.InvocationID)
		if err != nil {
			return false, false, err
		}
		if !inv.State.Terminal() {
			got, err := a.FinalizeStranded(ctx, inv.ID)
			if errors.Is(err, ErrWorkflowRunning) || errors.Is(err, ErrLeaseLive) {
				return false, false, nil
			}
			return err == nil, err == nil && got.State.Terminal(), err
		}
		return a.sweepOrphan(ctx, eff, inv.WorkflowID)
	}
	undoID, ok := strings.CutPrefix(eff.OperationKey, "undo-")
	if !ok {
		return false, false, fmt.Errorf("effect %s names no invocation and is no compensation", eff.OperationKey)
	}
	entry, err := a.cfg.Store.UndoGet(ctx, undoID)
	if err != nil {
		return false, false, fmt.Errorf("error reading the undo entry of %s: %w", eff.OperationKey, err)
	}
	return a.sweepOrphan(ctx, eff, workflows.SessionWorkflowID(entry.SessionID))
}

// sweepOrphan holds an effect with no open invocation to finish: a
// compensation, or an effect claimed after its invocation was finished.
func (a *Activities) sweepOrphan(ctx context.Context, eff ledger.Effect, workflowID string) (held, finished bool, err error) {
	status, err := a.workflowStatus(ctx, workflowID)
	if err != nil || status == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return false, false, err
	}
	in := workflows.ExecuteInput{InvocationID: eff.InvocationID, OperationKey: eff.OperationKey, Tool: eff.Tool}
	why := fmt.Sprintf("its workflow %s ended (%s) without settling it", workflowID, workflowStatusName(status))
	err = a.holdStranded(ctx, in, eff, why, "sweeper", false)
	return err == nil, false, err
}
