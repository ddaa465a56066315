package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// ErrLeaseLive means an invocation cannot be finalized yet: its effect is
// in progress under a lease that has not run out, so the attempt holding
// it may still come back with the provider's answer.
var ErrLeaseLive = errors.New("the effect's lease is still live")

// ErrWorkflowRunning means an invocation's workflow still runs: it, not a
// finalizer, will leave the invocation final.
var ErrWorkflowRunning = errors.New("the invocation's workflow is still running")

// Finalize leaves an invocation final in the ledger after its workflow met
// an error it cannot recover from. It is the workflow's last step on that
// path, so an agent re-sending the key hears an outcome, never an endless
// "still running".
func (a *Activities) Finalize(ctx context.Context, in workflows.FinalizeInput) (workflows.InvocationResult, error) {
	inv, err := a.cfg.Store.InvocationGet(ctx, in.Execute.InvocationID)
	if err != nil {
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error reading the invocation to finalize: %w", err))
	}
	actor := "finalizer:" + leaseOwner(ctx)
	got, err := a.finalize(ctx, inv, "it stopped on an error it could not recover from: "+in.Cause, actor)
	var live *leaseLiveError
	switch {
	case errors.As(err, &live):
		return workflows.InvocationResult{}, leaseBusy(live.expires)
	case err != nil:
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, err)
	}
	return workflows.InvocationResult{State: got.State, Observation: *got.Observation}, nil
}

// FinalizeStranded finishes an invocation that is not final but whose
// workflow no longer runs (it was terminated, timed out, or failed before
// it could finalize), as the sweeper and a re-sent key find it. It returns
// the invocation as the ledger then holds it: unchanged and final if it
// already was, ErrWorkflowRunning if its workflow still runs, or
// ErrLeaseLive if its effect's lease has not run out yet.
func (a *Activities) FinalizeStranded(ctx context.Context, invocationID string) (ledger.Invocation, error) {
	inv, err := a.cfg.Store.InvocationGet(ctx, invocationID)
	if err != nil || inv.State.Terminal() {
		return inv, err
	}
	status, err := a.workflowStatus(ctx, inv.WorkflowID)
	if err != nil {
		return inv, err
	}
	if status == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return inv, ErrWorkflowRunning
	}
	why := fmt.Sprintf("its workflow ended (%s) without finishing it", workflowStatusName(status))
	return a.finalize(ctx, inv, why, "sweeper")
}

// workflowStatus asks Temporal how an invocation's workflow stands. A
// workflow Temporal does not know (never started, or its history already
// deleted) counts as ended: nothing will finish its invocation.
func (a *Activities) workflowStatus(ctx context.Context, workflowID string) (enums.WorkflowExecutionStatus, error) {
	if a.cfg.Temporal == nil {
		return 0, errors.New("cannot tell whether the workflow runs: no Temporal client is configured")
	}
	desc, err := a.cfg.Temporal.DescribeWorkflowExecution(ctx, workflowID, "")
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		return enums.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED, nil
	case err != nil:
		return 0, fmt.Errorf("error describing workflow %s: %w", workflowID, err)
	}
	return desc.GetWorkflowExecutionInfo().GetStatus(), nil
}

func workflowStatusName(s enums.WorkflowExecutionStatus) string {
	if s == enums.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED {
		return "not found"
	}
	return s.String()
}

type leaseLiveError struct {
	expires time.Time
}

func (e *leaseLiveError) Error() string {
	return fmt.Sprintf("%v until %s", ErrLeaseLive, e.expires.Format(time.RFC3339))
}

func (e *leaseLiveError) Unwrap() error { return ErrLeaseLive }

// finalize leaves an open invocation final from what the ledger knows of
// its effect, why saying what stopped it:
//   - a settled effect: the outcome it recorded, which only the last write
//     (finishing the invocation) missed;
//   - an effect in progress past its lease: the provider may have acted,
//     so it is held for reconciliation, with an event saying why;
//   - no effect: nothing was claimed, so nothing was sent: failed, with
//     the root cause. A record-deferred call whose intent was recorded is
//     recorded.
//
// Every write is conditional on the state finalize read, so an attempt
// that finishes the invocation first keeps its outcome.
func (a *Activities) finalize(ctx context.Context, inv ledger.Invocation, why, actor string) (ledger.Invocation, error) {
	in := workflows.ExecuteInput{
		InvocationID: inv.ID, OperationKey: inv.OperationKey, SessionID: inv.SessionID,
		Tool: inv.Tool, Route: inv.Route, Args: inv.Args, ArgsHash: inv.ArgsHash,
	}
	eff, err := a.cfg.Store.EffectGet(ctx, inv.OperationKey)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		err = a.finalizeUnclaimed(ctx, inv, in, why)
	case err != nil:
		return inv, fmt.Errorf("error reading the effect of %s: %w", inv.OperationKey, err)
	case eff.Status == mt.EffectInProgress:
		err = a.holdStranded(ctx, in, eff, why, actor, true)
	default:
		obs := a.settledObservation(in, eff, why)
		err = a.cfg.Store.InvocationFinishOpen(ctx, inv.ID, invocationState(eff.Status), obs)
	}
	if err != nil && !errors.Is(err, ledger.ErrInvocationFinal) && !errors.Is(err, ledger.ErrLeaseLost) {
		return inv, err
	}
	got, gerr := a.cfg.Store.InvocationGet(ctx, inv.ID)
	if gerr != nil {
		return inv, gerr
	}
	if !got.State.Terminal() {
		// Lost a race to an attempt that moved the effect on; the next
		// sweep (or retry) sees where it went.
		return got, fmt.Errorf("invocation %s is still %s after finalizing: %w", inv.ID, got.State, err)
	}
	a.cfg.Logger.Warn("invocation finalized after its workflow stopped", "invocation", inv.ID,
		"operation_key", inv.OperationKey, "state", got.State, "why", why)
	a.notifySession(ctx, workflows.CallRecord{
		InvocationID: got.ID, OperationKey: got.OperationKey, Tool: got.Tool,
		Route: got.Route, State: got.State, Summary: got.Observation.Summary,
	}, got.SessionID)
	return got, nil
}

// finalizeUnclaimed finishes an invocation that never claimed its key.
func (a *Activities) finalizeUnclaimed(ctx context.Context, inv ledger.Invocation, in workflows.ExecuteInput, why string) error {
	if inv.Route == mt.RouteDeferred {
		items, err := a.cfg.Store.DeferredListBySession(ctx, inv.SessionID)
		if err != nil {
			return fmt.Errorf("error reading the deferred items of %s: %w", inv.SessionID, err)
		}
		for _, d := range items {
			if d.OperationKey == inv.OperationKey {
				// The intent is recorded; only its answer was lost.
				_, err := a.RecordDeferred(ctx, in)
				return err
			}
		}
	}
	return a.cfg.Store.InvocationFinishOpen(ctx, inv.ID, mt.InvocationFailed, a.noticed(in, abortedObservation(a.finalSource(in), why)))
}

// holdStranded moves an effect whose attempt stopped holding it into
// reconciliation, finishing its invocation (when finish is set) in the same
// transaction. The stale owner's lease fences the move: an attempt that
// took the key over in the meantime makes it fail with ErrLeaseLost.
func (a *Activities) holdStranded(ctx context.Context, in workflows.ExecuteInput, eff ledger.Effect, why, actor string, finish bool) error {
	if time.Now().Before(eff.LeaseExpiresAt) {
		return &leaseLiveError{expires: eff.LeaseExpiresAt}
	}
	reason := fmt.Sprintf("%s; its attempt claimed the key and may have called the provider, but its lease ran out at %s with no answer recorded",
		why, eff.LeaseExpiresAt.UTC().Format(time.RFC3339))
	obs := observation.Pending(observation.Failure{
		Code:          mt.CodeOutcomeUnknown,
		Summary:       fmt.Sprintf("Outcome of %s is unknown; held for reconciliation", in.Tool),
		RootCause:     reason,
		Remediation:   "Do not call again. Tell the person you can't confirm it yet and that the team will check and follow up.",
		StopCondition: "Stop now: the operation key is held until the provider's state is reconciled.",
		Wording:       "I can't confirm that has gone through yet; the team will check and follow up with you.",
	}, a.finalSource(in))
	obs = a.noticed(in, obs)
	a.cfg.Logger.Warn("stranded effect held for reconciliation", "operation_key", in.OperationKey, "tool", in.Tool, "why", reason)
	p := ledger.EffectReconcileParams{
		OperationKey: in.OperationKey,
		Owner:        eff.LeaseOwner,
		Status:       mt.EffectNeedsReconciliation,
		Result:       &obs,
		Error:        reason,
		Event:        ledger.ReconciliationEvent{Kind: ledger.ReconciliationEscalated, Actor: actor, Reason: reason},
	}
	if finish {
		p.InvocationState = mt.InvocationNeedsReconciliation
	}
	if _, err := a.cfg.Store.EffectReconcile(ctx, p); err != nil {
		return err
	}
	a.pageHeldMoney(in.Tool, in.OperationKey, reason)
	return nil
}

// settledObservation is what a settled effect recorded, for an invocation
// that missed it.
func (a *Activities) settledObservation(in workflows.ExecuteInput, eff ledger.Effect, why string) mt.Observation {
	if eff.Result != nil {
		return *eff.Result
	}
	if eff.Status == mt.EffectSucceeded {
		// Never the case for effects maestro settles; said plainly rather
		// than claimed.
		obs := observation.Pending(observation.Failure{
			Code:          mt.CodeOutcomeUnknown,
			Summary:       fmt.Sprintf("%s is recorded as done but its answer was not kept", in.Tool),
			RootCause:     why,
			Remediation:   "Do not call again. Tell the person the team will confirm and follow up.",
			StopCondition: "Stop: this operation key is settled.",
			Wording:       "I can't confirm that has gone through yet; the team will check and follow up with you.",
		}, a.finalSource(in))
		return a.noticed(in, obs)
	}
	return a.noticed(in, abortedObservation(a.finalSource(in), why+"; "+eff.Error))
}

// noticed appends the tool's safety notice to an observation short of
// success: whatever else is lost, the person still hears it.
func (a *Activities) noticed(in workflows.ExecuteInput, obs mt.Observation) mt.Observation {
	if t, ok := a.cfg.Catalog.Load().Tool(in.Tool); ok && obs.Status != mt.StatusSuccess {
		obs.Wording = tools.WithNotice(obs.Wording, t.RenderNotice(templateData(in, nil, nil)))
	}
	return obs
}

// abortedObservation reports an invocation that stopped before doing
// anything: nothing was claimed, so nothing reached the provider.
func abortedObservation(src *mt.Source, why string) mt.Observation {
	return observation.Error(observation.Failure{
		Code:          mt.CodeAborted,
		Summary:       src.Tool + " stopped before it did anything; nothing was done",
		RootCause:     "The invocation did not complete: " + why + ".",
		Remediation:   "Tell the person it did not go through. If they still want it, call again with a new operation key.",
		StopCondition: "Do not retry with this operation key; stop after one more failure and hand over to a human.",
		Wording:       "I wasn't able to do that.",
	}, src)
}

// finalSource is source for a tool the catalog may no longer hold.
func (a *Activities) finalSource(in workflows.ExecuteInput) *mt.Source {
	if t, ok := a.cfg.Catalog.Load().Tool(in.Tool); ok {
		return source(t, in)
	}
	return &mt.Source{System: "maestro", Tool: in.Tool, OperationKey: in.OperationKey, InvocationID: in.InvocationID}
}
