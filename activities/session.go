package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/compensation"
	"github.com/maestro-run/maestro/internal/failpoint"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/store"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// UndoList lists the session's pending compensations, newest first: the
// order the saga runs them in. Entries already compensated or skipped are
// left out, so a second rollback compensates nothing twice.
func (a *Activities) UndoList(ctx context.Context, sessionID string) ([]workflows.UndoStep, error) {
	entries, err := a.cfg.Store.UndoListBySession(ctx, sessionID)
	if err != nil {
		return nil, retryable(ErrTypeLedger, fmt.Errorf("error listing undo entries: %w", err))
	}
	steps := []workflows.UndoStep{}
	for _, e := range entries {
		if e.Status == store.UndoPending {
			comp, ok := a.cfg.Catalog.Tool(e.CompensationTool)
			steps = append(steps, workflows.UndoStep{UndoID: e.ID, Tool: e.CompensationTool, OperationKey: e.OperationKey, Seq: e.Seq,
				NeedsApproval: ok && comp.Effect == mt.EffectMoney})
		}
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
	case store.UndoCompensated:
		out.Status, out.Summary = workflows.UndoCompensated, "already compensated"
		return out, nil
	case store.UndoSkipped:
		out.Status, out.Summary = workflows.UndoSkipped, "already skipped: the effect never happened"
		return out, nil
	}
	eff, err := a.cfg.Store.EffectGet(ctx, entry.OperationKey)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && eff.Status == mt.EffectFailed:
		return a.undoDone(ctx, out, store.UndoSkipped, "the effect never happened; nothing to undo", nil)
	case err != nil:
		return out, retryable(ErrTypeLedger, fmt.Errorf("error reading the effect to undo: %w", err))
	case eff.Status != mt.EffectSucceeded:
		// Undoing an effect whose outcome is unknown could undo nothing or
		// the wrong thing: a human reconciles it first.
		return a.undoDone(ctx, out, store.UndoFailed, "the outcome of "+entry.OperationKey+" is "+string(eff.Status)+"; reconcile it before compensating", nil)
	}

	tool, in, err := a.compensationCall(entry, eff)
	if err != nil {
		return a.undoDone(ctx, out, store.UndoFailed, err.Error(), nil)
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
			return a.undoDone(ctx, out, store.UndoFailed, summary, nil)
		}
	}
	call, err := renderCall(tool, in)
	if err != nil {
		return a.undoDone(ctx, out, store.UndoFailed, err.Error(), nil)
	}
	res, err := a.effect(ctx, tool, in, call)
	if err != nil {
		return out, err
	}
	if res.State != mt.InvocationSucceeded {
		return a.undoDone(ctx, out, store.UndoFailed, res.Observation.Summary, nil)
	}
	// Mid-saga: the provider has undone the effect and the undo entry does
	// not know yet. The crash test kills the worker here.
	failpoint.Inject(failpoint.AfterCompensation)
	return a.undoDone(ctx, out, store.UndoCompensated, res.Observation.Summary, res.Observation.Receipt)
}

// compensationCall renders the compensation's arguments from the original
// call's snapshot and the original effect's receipt.
func (a *Activities) compensationCall(entry store.UndoEntry, eff store.Effect) (*tools.Tool, workflows.ExecuteInput, error) {
	var snap compensation.Snapshot
	if err := json.Unmarshal(entry.ArgsSnapshot, &snap); err != nil {
		return nil, workflows.ExecuteInput{}, fmt.Errorf("undo entry %s has an unreadable snapshot: %w", entry.ID, err)
	}
	original, ok := a.cfg.Catalog.Tool(snap.Tool)
	if !ok || original.Compensation == nil {
		return nil, workflows.ExecuteInput{}, fmt.Errorf("tool %q and its compensation are no longer in the catalog; nothing was run", snap.Tool)
	}
	comp, ok := a.cfg.Catalog.Tool(entry.CompensationTool)
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
	}, nil
}

func (a *Activities) undoDone(ctx context.Context, out workflows.UndoOutcome, to store.UndoStatus, summary string, r *mt.Receipt) (workflows.UndoOutcome, error) {
	got, err := a.cfg.Store.UndoSetStatus(ctx, out.UndoID, to, summary)
	if err != nil && !(errors.Is(err, store.ErrUndoTransition) && got.Status == to) {
		return out, retryable(ErrTypeLedger, fmt.Errorf("error recording compensation outcome: %w", err))
	}
	out.Status, out.Summary, out.Receipt = string(to), summary, r
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

// SessionResolve records a human's resolution of a halt.
func (a *Activities) SessionResolve(ctx context.Context, req workflows.ResolveRequest, sessionID string) error {
	_, err := a.cfg.Store.SessionResolve(ctx, sessionID, req.Actor, req.Reason)
	if err != nil && !errors.Is(err, store.ErrSessionNotHalted) {
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
