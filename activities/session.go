package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/compensation"
	"github.com/maestro-run/maestro/internal/failpoint"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// UndoList lists the session's compensations still to run, newest first:
// the order the saga runs them in. Entries already compensated or skipped
// are left out, so a second rollback compensates nothing twice; failed
// ones are listed, so a retried rollback runs them again. A step whose
// effect is still in flight says so, and the rollback waits for it.
func (a *Activities) UndoList(ctx context.Context, sessionID string) ([]workflows.UndoStep, error) {
	entries, err := a.cfg.Store.UndoListBySession(ctx, sessionID)
	if err != nil {
		return nil, retryable(ErrTypeLedger, fmt.Errorf("error listing undo entries: %w", err))
	}
	steps := []workflows.UndoStep{}
	for _, e := range entries {
		if e.Status != ledger.UndoPending && e.Status != ledger.UndoFailed {
			continue
		}
		eff, err := a.cfg.Store.EffectGet(ctx, e.OperationKey)
		if err != nil && !errors.Is(err, ledger.ErrNotFound) {
			return nil, retryable(ErrTypeLedger, fmt.Errorf("error reading the effect to undo: %w", err))
		}
		comp, ok := a.cfg.Catalog.Load().Tool(e.CompensationTool)
		steps = append(steps, workflows.UndoStep{UndoID: e.ID, Tool: e.CompensationTool, OperationKey: e.OperationKey, Seq: e.Seq,
			NeedsApproval: ok && comp.Effect == mt.EffectMoney,
			Unsettled:     err == nil && eff.Status == mt.EffectInProgress})
	}
	return steps, nil
}

// Compensate undoes one effect. The compensation is itself an effect under
// the ledger, keyed undo-{undo_id} and sent to the provider with that key,
// so a retried or repeated compensation happens once.
func (a *Activities) Compensate(ctx context.Context, step workflows.UndoStep) (workflows.UndoOutcome, error) {
	out := workflows.UndoOutcome{UndoStep: step}
	entry, err := a.cfg.Store.UndoGet(ctx, step.UndoID)
	if err != nil {
		return out, retryable(ErrTypeLedger, fmt.Errorf("error reading undo entry: %w", err))
	}
	switch entry.Status {
	case ledger.UndoCompensated:
		out.Status, out.Summary = workflows.UndoCompensated, "already compensated"
		return out, nil
	case ledger.UndoSkipped:
		out.Status, out.Summary = workflows.UndoSkipped, "already skipped: the effect never happened"
		return out, nil
	}
	eff, err := a.cfg.Store.EffectGet(ctx, entry.OperationKey)
	switch {
	case errors.Is(err, ledger.ErrNotFound) || err == nil && eff.Status == mt.EffectFailed:
		return a.undoDone(ctx, out, ledger.UndoSkipped, "the effect never happened; nothing to undo", nil)
	case err != nil:
		return out, retryable(ErrTypeLedger, fmt.Errorf("error reading the effect to undo: %w", err))
	case eff.Status == mt.EffectInProgress:
		// Undoing an effect whose outcome is unknown could undo nothing or
		// the wrong thing. The entry stays pending: it runs when the
		// rollback is retried after the effect settles.
		return a.undoHold(ctx, out, entry, "the outcome of "+entry.OperationKey+" is still unknown after the rollback waited for it (in_progress); "+
			"this compensation runs when the rollback is retried once it settles")
	case eff.Status != mt.EffectSucceeded:
		return a.undoHold(ctx, out, entry, "the outcome of "+entry.OperationKey+" is "+string(eff.Status)+
			"; reconcile it, then retry the rollback to compensate it")
	}

	tool, in, err := a.compensationCall(ctx, entry, eff)
	var passing *temporal.ApplicationError
	switch {
	case errors.As(err, &passing) && !passing.NonRetryable():
		// The ledger did not answer: the undo entry stays as it is, and
		// Temporal retries the step.
		return out, err
	case err != nil:
		return a.undoDone(ctx, out, ledger.UndoFailed, err.Error(), nil)
	}
	if tool.Effect == mt.EffectMoney {
		// Decided from the catalog, not from the step: whoever asked for
		// the rollback, money moves only with a human's approval.
		status, summary, err := a.compensationApproved(ctx, tool, step, &in)
		switch {
		case err != nil:
			return out, err
		case status == workflows.UndoAwaitingApproval:
			out.Status, out.Summary = status, summary
			return out, nil
		case status == workflows.UndoFailed:
			return a.undoDone(ctx, out, ledger.UndoFailed, summary, nil)
		}
	}
	call, err := renderCall(tool, in)
	if err != nil {
		return a.undoDone(ctx, out, ledger.UndoFailed, err.Error(), nil)
	}
	res, err := a.effect(ctx, tool, in, call)
	if err != nil {
		return out, err
	}
	if res.State != mt.InvocationSucceeded {
		return a.undoDone(ctx, out, ledger.UndoFailed, res.Observation.Summary, nil)
	}
	// Mid-saga: the provider has undone the effect and the undo entry does
	// not know yet. The crash test kills the worker here.
	failpoint.Inject(failpoint.AfterCompensation)
	return a.undoDone(ctx, out, ledger.UndoCompensated, res.Observation.Summary, res.Observation.Receipt)
}

// compensationCall renders the compensation's arguments from the original
// call's snapshot and the original effect's receipt, under the catalog
// version the original effect ran under: a later catalog's compensation
// might undo something else, or differently.
func (a *Activities) compensationCall(ctx context.Context, entry ledger.UndoEntry, eff ledger.Effect) (*tools.Tool, workflows.ExecuteInput, error) {
	var snap compensation.Snapshot
	if err := json.Unmarshal(entry.ArgsSnapshot, &snap); err != nil {
		return nil, workflows.ExecuteInput{}, fmt.Errorf("undo entry %s has an unreadable snapshot: %w", entry.ID, err)
	}
	var version string
	if eff.InvocationID != "" {
		inv, err := a.cfg.Store.InvocationGet(ctx, eff.InvocationID)
		if err != nil {
			return nil, workflows.ExecuteInput{}, retryable(ErrTypeLedger, fmt.Errorf("error reading the invocation's catalog version: %w", err))
		}
		version = inv.CatalogVersion
	}
	cat, err := a.catalogAt(ctx, version)
	if err != nil {
		return nil, workflows.ExecuteInput{}, fmt.Errorf("the catalog the effect ran under cannot be loaded; nothing was run: %w", err)
	}
	original, ok := cat.Tool(snap.Tool)
	if !ok || original.Compensation == nil {
		return nil, workflows.ExecuteInput{}, fmt.Errorf("tool %q and its compensation are no longer in the catalog; nothing was run", snap.Tool)
	}
	comp, ok := cat.Tool(entry.CompensationTool)
	if !ok {
		return nil, workflows.ExecuteInput{}, fmt.Errorf("compensation tool %q is no longer in the catalog; nothing was run", entry.CompensationTool)
	}
	// The undo runs the compensation that was recorded or nothing: a
	// changed one might undo something else, or differently, so an
	// operator decides.
	if now := original.Compensation; now.Tool != entry.CompensationTool || !now.SameVersion(entry.CompensationVersion) {
		return nil, workflows.ExecuteInput{}, fmt.Errorf("the compensation of %s changed since this undo entry was recorded: recorded %s version %s, catalog now has %s version %s; nothing was run",
			snap.Tool, entry.CompensationTool, entry.CompensationVersion, now.Tool, now.VersionString())
	}
	args, _ := tools.DecodeArgs(snap.Args)
	raw, err := original.Compensation.RenderArgs(tools.TemplateData{Args: args, Receipt: eff.Receipt, OperationKey: snap.OperationKey})
	if err != nil {
		return nil, workflows.ExecuteInput{}, err
	}
	if err := comp.ValidateArgs(raw); err != nil {
		return nil, workflows.ExecuteInput{}, fmt.Errorf("compensation arguments are invalid: %w", err)
	}
	canonical, hash, err := approval.Canonicalize(raw)
	if err != nil {
		return nil, workflows.ExecuteInput{}, err
	}
	return comp, workflows.ExecuteInput{
		OperationKey: workflows.CompensationOperationKey(entry.ID),
		SessionID:    entry.SessionID,
		Tool:         comp.Name,
		Route:        mt.RouteWrite,
		Args:         canonical,
		ArgsHash:     hash,
		// The compensation runs as the original's catalog had it.
		CatalogVersion: cat.Hash(),
	}, nil
}

func (a *Activities) undoDone(ctx context.Context, out workflows.UndoOutcome, to ledger.UndoStatus, summary string, r *mt.Receipt) (workflows.UndoOutcome, error) {
	got, err := a.cfg.Store.UndoSetStatus(ctx, out.UndoID, to, summary)
	if err != nil && !(errors.Is(err, ledger.ErrUndoTransition) && got.Status == to) {
		return out, retryable(ErrTypeLedger, fmt.Errorf("error recording compensation outcome: %w", err))
	}
	out.Status, out.Summary, out.Receipt = string(to), summary, r
	return out, nil
}

// undoHold answers a step that cannot run yet. A pending entry stays
// pending, with why, so an operator's "by hand" resolution can close it; a
// failed one (from before entries were held) stays as it is.
func (a *Activities) undoHold(ctx context.Context, out workflows.UndoOutcome, entry ledger.UndoEntry, summary string) (workflows.UndoOutcome, error) {
	if entry.Status == ledger.UndoPending {
		if _, err := a.cfg.Store.UndoSetStatus(ctx, entry.ID, ledger.UndoPending, summary); err != nil && !errors.Is(err, ledger.ErrUndoTransition) {
			return out, retryable(ErrTypeLedger, fmt.Errorf("error holding the undo entry: %w", err))
		}
	}
	out.Status, out.Summary = workflows.UndoPending, summary
	return out, nil
}

// SessionHalt records a halt in the ledger, which makes admission refuse
// the session's calls until a human resolves it.
func (a *Activities) SessionHalt(ctx context.Context, in workflows.HaltInput) error {
	if _, err := a.cfg.Store.SessionHalt(ctx, in.SessionID, in.Step, in.Reason); err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error halting session: %w", err))
	}
	return nil
}

// SessionRollbackBegin closes the session to new effects before the
// rollback waits for the ones in flight.
func (a *Activities) SessionRollbackBegin(ctx context.Context, sessionID string) error {
	if _, err := a.cfg.Store.SessionRollbackBegin(ctx, sessionID); err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error closing the session for its rollback: %w", err))
	}
	return nil
}

// SessionRollbackEnd opens the session again once its rollback finished.
func (a *Activities) SessionRollbackEnd(ctx context.Context, sessionID string) error {
	if _, err := a.cfg.Store.SessionRollbackEnd(ctx, sessionID); err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error opening the session after its rollback: %w", err))
	}
	return nil
}

// SessionResolve records a human's resolution of a halt: by hand, which
// closes the entries the rollback could not run, or a retry of the
// rollback, which the session workflow runs next.
func (a *Activities) SessionResolve(ctx context.Context, req workflows.ResolveRequest, sessionID string) error {
	how := ledger.ResolvedByHand
	if req.Retry {
		how = ledger.ResolvedRetry
	}
	_, err := a.cfg.Store.SessionResolve(ctx, sessionID, req.Actor, req.Reason, how)
	if err != nil && !errors.Is(err, ledger.ErrSessionNotHalted) {
		return retryable(ErrTypeLedger, fmt.Errorf("error resolving session: %w", err))
	}
	return nil
}

// SessionEnd ends a session nobody ended before its lifetime ran out.
func (a *Activities) SessionEnd(ctx context.Context, sessionID string) error {
	if _, _, err := a.cfg.Store.SessionEnd(ctx, sessionID, nil); err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error ending session: %w", err))
	}
	return nil
}
