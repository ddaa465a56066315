package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"

	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/compensation"
	"github.com/maestro-run/maestro/internal/answer"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/failpoint"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// Execute performs one invocation's effect (or read) and records the
// outcome. Business outcomes (a provider refusal, an unknown outcome) come
// back as observations; only failures worth retrying are returned as errors.
func (a *Activities) Execute(ctx context.Context, in workflows.ExecuteInput) (workflows.InvocationResult, error) {
	tool, err := a.admittedTool(ctx, &in)
	if err != nil {
		return workflows.InvocationResult{}, err
	}
	var approved *ledger.ApprovalRequest
	if in.Route == mt.RouteGated {
		// A call run as admitted spends its token with its claim, which
		// reads the decision under the request's lock: only a call not
		// approved as admitted reads its request first.
		res, req, done, err := a.executeAsAdmitted(ctx, tool, in)
		if done || err != nil {
			return res, err
		}
		if res, approved, err = a.resolveApproval(ctx, tool, &in, req); err != nil || approved == nil {
			return res, err
		}
	}
	call, err := renderCall(tool, in)
	if err != nil {
		return a.finish(ctx, in, mt.InvocationFailed, observation.Error(observation.Failure{
			Code:          mt.CodeInvalidArgs,
			Summary:       "The call could not be prepared for " + in.Tool,
			RootCause:     err.Error(),
			Remediation:   "Check the arguments against the tool's schema and call again with a new operation key.",
			StopCondition: "Stop if the same arguments fail again.",
		}, source(tool, in)))
	}
	parts, composite := a.cfg.Connectors.Parts(call)
	if approved != nil && (in.Route == mt.RouteRead || composite) {
		// No single claim to spend the token with: spend it first.
		if res, ok, err := a.spendToken(ctx, tool, in, *approved); !ok || err != nil {
			return res, err
		}
		approved = nil
	}
	if in.Route == mt.RouteRead {
		return a.read(ctx, tool, in, call)
	}
	if composite {
		res, err := a.compositeEffect(ctx, tool, in, parts, inCall)
		if err != nil || res.State == mt.InvocationRunning {
			// Running: the answer is recorded and the remaining parts
			// are delivered after it.
			return res, err
		}
		return a.finish(ctx, in, res.State, res.Observation)
	}
	var spend *ledger.ApprovalSpend
	if approved != nil {
		spend = a.spendFor(in)
	}
	res, undecided, _, err := a.runEffect(ctx, tool, in, call, spend)
	if err == nil && undecided != nil {
		// Read approved for these very arguments a moment ago: decisions
		// are final, so this is a ledger out of step; a retry reads again.
		return workflows.InvocationResult{}, retryable(ErrTypeLedger,
			fmt.Errorf("approval %s is %s for other arguments than the ones it approved", undecided.ID, undecided.Status))
	}
	return res, err
}

// executeAsAdmitted runs a gated call with the arguments it was admitted
// with, its token spent with its claim. done is false when it did not run:
// its request is not approved for those arguments (req, read under the
// claim's lock), or it is no single effect, or it cannot be rendered (req
// nil); the caller then resolves the request.
func (a *Activities) executeAsAdmitted(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput) (res workflows.InvocationResult, req *ledger.ApprovalRequest, done bool, err error) {
	if in.ApprovalID == "" {
		return res, nil, false, nil
	}
	call, err := renderCall(tool, in)
	if err != nil {
		return res, nil, false, nil
	}
	if _, composite := a.cfg.Connectors.Parts(call); composite {
		return res, nil, false, nil
	}
	// What is sent must hash to what was approved; the claim binds the
	// token to this hash.
	if _, hash, err := approval.Canonicalize(in.Args); err != nil || hash != in.ArgsHash {
		return res, nil, false, nil
	}
	return a.runEffect(ctx, tool, in, call, a.spendFor(in))
}

// spendFor is the token spend of in's approval. The spender is the
// invocation, so a retry of this same invocation after a crash may go on
// to the ledger (which keeps the effect to one); anything else holding a
// spent, expired or mismatched token is refused.
func (a *Activities) spendFor(in workflows.ExecuteInput) *ledger.ApprovalSpend {
	return &ledger.ApprovalSpend{ApprovalID: in.ApprovalID, UsedBy: "invocation:" + in.InvocationID, MintTTL: a.cfg.TokenTTL}
}

// runEffect performs a single effect under the ledger and records its
// outcome, spending spend's token with the claim. undecided is the
// spend's request when it is not approved for in's arguments: nothing was
// claimed, spent or recorded, and done is false.
func (a *Activities) runEffect(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, call connectors.Call, spend *ledger.ApprovalSpend) (res workflows.InvocationResult, undecided *ledger.ApprovalRequest, done bool, err error) {
	e := &execution{invocationID: in.InvocationID, tool: tool, spend: spend}
	res, err = a.effect(withExecution(ctx, e), tool, in, call)
	if err != nil {
		return workflows.InvocationResult{}, nil, true, err
	}
	if e.undecided != nil {
		return workflows.InvocationResult{}, e.undecided, false, nil
	}
	res, err = a.recordEffect(ctx, tool, in, e, res)
	return res, nil, true, err
}

// recordEffect records an effect's outcome on its invocation, unless the
// settle recorded it already.
func (a *Activities) recordEffect(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, e *execution, res workflows.InvocationResult) (workflows.InvocationResult, error) {
	var err error
	switch {
	case e.announced:
		return outcome(e.state, e.obs)
	case e.recorded:
		// Recorded with the settle: only the answer board and the
		// session are left to tell.
		return a.announce(ctx, in, e.state, e.obs, e.answer)
	}
	if res.State == mt.InvocationSucceeded {
		if res.Observation, err = a.duringRollback(ctx, tool, in, res.Observation); err != nil {
			return workflows.InvocationResult{}, err
		}
	}
	return a.finish(ctx, in, res.State, res.Observation)
}

// read runs a lookup. Reads change nothing, so they need no ledger claim.
func (a *Activities) read(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, call connectors.Call) (workflows.InvocationResult, error) {
	res, err := a.do(ctx, tool, call)
	if err != nil {
		ce := connectors.AsError(err)
		// A read changes nothing, so an unknown outcome is as safe to
		// repeat as an unreachable provider.
		if (ce.Retryable() || ce.Class == connectors.ClassUnknown) && !lastAttempt(ctx) {
			return workflows.InvocationResult{}, retryable(ErrTypeProviderRetry, ce)
		}
		return a.finish(ctx, in, mt.InvocationFailed, failureObservation(tool, in, ce))
	}
	if res.Empty {
		return a.finish(ctx, in, mt.InvocationSucceeded, nothingFoundObservation(tool, in, res.Payload))
	}
	wording := a.successWording(ctx, tool, in, nil, res.Payload, fallbackReadWording)
	obs := observation.Success("Looked up "+tool.Name, wording, res.Payload, nil, source(tool, in))
	return a.finish(ctx, in, mt.InvocationSucceeded, obs)
}

// effect performs a write under the idempotency ledger: claim the key (and,
// for compensable writes, push the undo entry in the same transaction), run
// and record the catalog's before read, call the provider with the key,
// then settle the claim with the receipt, and read the state back once it
// succeeded. It returns the outcome as the ledger records it; recording it
// on an invocation is the caller's business.
func (a *Activities) effect(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, call connectors.Call) (workflows.InvocationResult, error) {
	res, err := a.claimAndSend(ctx, tool, in, call)
	if err == nil && res.State == mt.InvocationSucceeded && !readWithSettle(ctx, in) {
		a.readAfter(ctx, tool, in, res.Observation.Receipt)
	}
	return res, err
}

func (a *Activities) claimAndSend(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, call connectors.Call) (workflows.InvocationResult, error) {
	owner := leaseOwner(ctx)
	if failpoint.LedgerBypassed() {
		// The crash test's control run: without the key, the provider
		// cannot tell a resend from a new request.
		call.IdempotencyKey = ""
	}
	undo, err := compensation.Entry(tool, in.SessionID, in.OperationKey, in.Args)
	if err != nil {
		return workflows.InvocationResult{}, nonRetryable(workflows.ErrTypeInvariant, err)
	}
	before, err := a.readBeforeClaim(ctx, tool, in)
	if err != nil {
		return workflows.InvocationResult{}, err
	}
	claim, err := a.cfg.Store.EffectClaim(ctx, ledger.EffectClaimParams{
		OperationKey: in.OperationKey,
		InvocationID: in.InvocationID,
		Tool:         in.Tool,
		PayloadHash:  in.ArgsHash,
		Owner:        owner,
		LeaseTTL:     a.cfg.LeaseTTL,
		BeforeState:  beforeState(call),
		Undo:         undo,
		BeforeRead:   before,
		// The class the effect runs under, for the audit: a rollback's
		// compensation has no admitted invocation to carry it.
		EffectClass:    tool.Effect,
		CatalogVersion: in.CatalogVersion,
		// A rollback that began before this claim refuses it; a
		// compensation is the rollback's own work.
		SessionID: claimSession(in),
		Spend:     spendOf(ctx, in),
	})
	if err == nil && claim.Approval != nil {
		// Not approved for these arguments: the caller resolves it.
		executionOf(ctx, in).undecided = claim.Approval
		return workflows.InvocationResult{}, nil
	}
	if err == nil && claim.Spend != nil {
		return a.spendRefused(ctx, tool, in, spendOf(ctx, in).ApprovalID, claim.Spend)
	}
	if res, done, err := claimAnswer(tool, in, claim, err); done {
		return res, err
	}
	if claim.Outcome == ledger.ClaimTakeover {
		// An earlier attempt died with the call perhaps in flight: find
		// out what the provider did before anything is sent again.
		if !failpoint.LedgerBypassed() {
			res, send, err := a.reconcile(ctx, tool, in, owner, call, claim.Effect, takenOver,
				"an earlier attempt stopped after it may have called the provider and before recording the answer")
			if err != nil || !send {
				return res, err
			}
		}
	}
	// A new claim recorded the before read made for it, if any; a key taken
	// over has whatever the attempt before this one recorded.
	recorded := recordedBefore{known: claim.Outcome == ledger.ClaimNew, read: before}
	if res, proceed, err := a.readBefore(ctx, tool, in, owner, recorded); err != nil || !proceed {
		return res, err
	}
	return a.send(ctx, tool, in, owner, call, claim.Effect)
}

// send calls the provider under a claim the caller holds and settles the
// claim with what came back. An answer that is lost is reconciled against
// the provider's records before anything else is sent.
func (a *Activities) send(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, call connectors.Call, eff ledger.Effect) (workflows.InvocationResult, error) {
	res, err := a.do(ctx, tool, call)
	if err != nil {
		ce := connectors.AsError(err)
		// The seam where the provider may have acted and answered with an
		// error that proves nothing. The crash test kills the worker here.
		failpoint.Inject(failpoint.AfterProviderError)
		if ce.Class != connectors.ClassUnknown || failpoint.LedgerBypassed() {
			return a.settleFailure(ctx, tool, in, owner, ce)
		}
		rres, resend, rerr := a.reconcile(ctx, tool, in, owner, call, eff, answerLost, ce.Error())
		if rerr != nil || !resend {
			return rres, rerr
		}
		if res, err = a.do(ctx, tool, call); err != nil {
			return a.unknownAgain(ctx, tool, in, owner, call, connectors.AsError(err))
		}
	}
	// The seam the ledger exists for: the provider has acted and nothing
	// records it yet. The crash test kills the worker here.
	failpoint.Inject(failpoint.AfterProvider)
	return a.settleSuccess(ctx, tool, in, owner, res)
}

func (a *Activities) settleSuccess(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, res connectors.Result) (workflows.InvocationResult, error) {
	if err := checkReceipt(tool, res.Receipt); err != nil {
		// The provider answered 2xx but did not prove the effect: we can
		// neither claim it nor call it failed.
		return a.settleUnknown(ctx, tool, in, owner, err.Error())
	}
	// Nothing between the receipt and the ledger may fail: the wording
	// falls back to one derived from the receipt rather than leave the
	// effect in progress with its proof in hand.
	wording := a.successWording(ctx, tool, in, res.Receipt, res.Payload, fallbackReceiptWording(res.Receipt))
	obs := observation.Success(successSummary(tool, res.Receipt), wording, res.Payload, res.Receipt, source(tool, in))
	p := ledger.EffectSettleParams{
		OperationKey: in.OperationKey,
		Owner:        owner,
		Status:       mt.EffectSucceeded,
		Receipt:      res.Receipt,
		AfterState:   res.Payload,
		Result:       &obs,
		AfterRead:    a.readAfterFirst(ctx, tool, in, res.Receipt),
	}
	settled, err := a.settleOrFinish(ctx, in, p)
	switch {
	case errors.Is(err, ledger.ErrLeaseLost):
		return a.lateReceipt(ctx, in, owner, res, obs)
	case err != nil:
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error settling effect: %w", err))
	}
	return settled, nil
}

func (a *Activities) settleFailure(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, ce *connectors.Error) (workflows.InvocationResult, error) {
	switch {
	case ce.Class == connectors.ClassUnknown:
		return a.settleUnknown(ctx, tool, in, owner, ce.Error())
	case ce.Retryable() && !lastAttempt(ctx):
		// Nothing happened at the provider: hand the key back so the next
		// attempt may claim it afresh.
		if err := a.cfg.Store.EffectRelease(ctx, in.OperationKey, owner); err != nil {
			return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error releasing operation key: %w", err))
		}
		return workflows.InvocationResult{}, retryable(ErrTypeProviderRetry, ce)
	}
	obs := failureObservation(tool, in, ce)
	return a.settle(ctx, in, ledger.EffectSettleParams{
		OperationKey: in.OperationKey,
		Owner:        owner,
		Status:       mt.EffectFailed,
		Result:       &obs,
		Error:        ce.Error(),
	})
}

func (a *Activities) settleUnknown(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner, why string) (workflows.InvocationResult, error) {
	obs := unknownObservation(tool, in, why)
	res, err := a.settle(ctx, in, ledger.EffectSettleParams{
		OperationKey: in.OperationKey,
		Owner:        owner,
		Status:       mt.EffectNeedsReconciliation,
		Result:       &obs,
		Error:        why,
	})
	if err == nil && res.State == mt.InvocationNeedsReconciliation {
		a.pageHeldMoney(in.Tool, in.OperationKey, why)
	}
	return res, err
}

func (a *Activities) settle(ctx context.Context, in workflows.ExecuteInput, p ledger.EffectSettleParams) (workflows.InvocationResult, error) {
	res, err := a.settleOrFinish(ctx, in, p)
	if errors.Is(err, ledger.ErrLeaseLost) {
		return a.leaseLost(ctx, in)
	}
	if err != nil {
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error settling effect: %w", err))
	}
	return res, nil
}

// settleOrFinish settles the effect and, under an execution, records the
// invocation's outcome with it. It returns the outcome as recorded.
func (a *Activities) settleOrFinish(ctx context.Context, in workflows.ExecuteInput, p ledger.EffectSettleParams) (workflows.InvocationResult, error) {
	if e := executionOf(ctx, in); e != nil {
		return a.settleFinish(ctx, e, in, p)
	}
	if err := a.cfg.Store.EffectSettle(ctx, p); err != nil {
		return workflows.InvocationResult{}, err
	}
	return outcome(invocationState(p.Status), *p.Result)
}

// leaseLost answers for an attempt whose lease another attempt took over:
// that attempt owns the outcome, so report what the ledger says rather
// than what this attempt saw.
func (a *Activities) leaseLost(ctx context.Context, in workflows.ExecuteInput) (workflows.InvocationResult, error) {
	eff, err := a.cfg.Store.EffectGet(ctx, in.OperationKey)
	if err != nil {
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error reading effect after losing its lease: %w", err))
	}
	if eff.Status == mt.EffectInProgress {
		return workflows.InvocationResult{}, retryable(ErrTypeLeaseBusy, errors.New("lease lost to another attempt that is still in progress"))
	}
	return effectOutcome(eff)
}

// effectOutcome is the outcome an already-settled effect recorded.
func effectOutcome(eff ledger.Effect) (workflows.InvocationResult, error) {
	if eff.Result == nil {
		return workflows.InvocationResult{}, nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("settled effect %s has no stored result", eff.OperationKey))
	}
	return outcome(invocationState(eff.Status), *eff.Result)
}

func outcome(state mt.InvocationState, obs mt.Observation) (workflows.InvocationResult, error) {
	return workflows.InvocationResult{State: state, Observation: obs}, nil
}

// finish records the invocation's final state and observation.
func (a *Activities) finish(ctx context.Context, in workflows.ExecuteInput, state mt.InvocationState, obs mt.Observation) (workflows.InvocationResult, error) {
	obs = withTraceID(ctx, obs)
	inv, err := a.cfg.Store.InvocationFinishRow(ctx, in.InvocationID, state, obs)
	if err != nil {
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error finishing invocation: %w", err))
	}
	if e := executionOf(ctx, in); e != nil {
		e.recorded, e.announced, e.state, e.obs = true, true, state, obs
	}
	return a.announce(ctx, in, state, obs, &answer.Answer{Invocation: inv})
}

// announce tells the answer board and the session of an outcome the
// ledger has committed; ans, when not nil, is what the commit returned.
func (a *Activities) announce(ctx context.Context, in workflows.ExecuteInput, state mt.InvocationState, obs mt.Observation, ans *answer.Answer) (workflows.InvocationResult, error) {
	if ans != nil {
		a.cfg.Answers.Answered(in.InvocationID, *ans)
	} else {
		a.cfg.Answers.Recorded(in.InvocationID)
	}
	a.notifySession(ctx, workflows.CallRecord{
		InvocationID: in.InvocationID, OperationKey: in.OperationKey, Tool: in.Tool,
		Route: in.Route, State: state, Summary: obs.Summary,
	}, in.SessionID)
	return workflows.InvocationResult{State: state, Observation: obs}, nil
}

// notifySession tells the session workflow of a failed call, the one
// outcome it acts on (the agent's on_failure policy). Every other outcome
// is only in the ledger, which the rollback and the session view read:
// a signal per call doubled the session's history and its workflow tasks
// (ADR 8). A lost signal costs the policy's rollback, never the record.
func (a *Activities) notifySession(ctx context.Context, rec workflows.CallRecord, sessionID string) {
	if a.cfg.Temporal == nil || sessionID == "" || rec.State != mt.InvocationFailed {
		return
	}
	err := a.cfg.Temporal.SignalWorkflow(ctx, workflows.SessionWorkflowID(sessionID), "", workflows.SignalCallRecorded, rec)
	var notFound *serviceerror.NotFound
	if err != nil && !errors.As(err, &notFound) {
		a.cfg.Logger.Warn("could not update the session view", "session", sessionID, "err", err)
	}
}

func invocationState(s mt.EffectStatus) mt.InvocationState {
	switch s {
	case mt.EffectSucceeded:
		return mt.InvocationSucceeded
	case mt.EffectNeedsReconciliation:
		return mt.InvocationNeedsReconciliation
	default:
		return mt.InvocationFailed
	}
}

// leaseOwner names this attempt. A retry of the same activity is a new
// owner, so a crashed attempt's lease is recognised as someone else's.
func leaseOwner(ctx context.Context) string {
	info := activity.GetInfo(ctx)
	return fmt.Sprintf("%s/%s/%d", info.WorkflowExecution.RunID, info.ActivityID, info.Attempt)
}

// nextLeaseOwner names the attempt Temporal runs if this one fails
// retryably, to hand it the claim (see retryLater).
func nextLeaseOwner(ctx context.Context) string {
	info := activity.GetInfo(ctx)
	return fmt.Sprintf("%s/%s/%d", info.WorkflowExecution.RunID, info.ActivityID, info.Attempt+1)
}

func lastAttempt(ctx context.Context) bool {
	info := activity.GetInfo(ctx)
	if info.RetryPolicy == nil || info.RetryPolicy.MaximumAttempts == 0 {
		return false
	}
	return info.Attempt >= info.RetryPolicy.MaximumAttempts
}

// claimAnswer answers a claim that leaves nothing to send: an error, a
// settled key, a key reused with other arguments, a session being rolled
// back, or a lease another attempt holds. done is false for a new or
// taken-over claim, which the caller goes on to act on.
func claimAnswer(tool *tools.Tool, in workflows.ExecuteInput, claim ledger.EffectClaimResult, err error) (res workflows.InvocationResult, done bool, _ error) {
	if err != nil {
		return res, true, retryable(ErrTypeLedger, fmt.Errorf("error claiming operation key: %w", err))
	}
	switch claim.Outcome {
	case ledger.ClaimSettled:
		res, err = effectOutcome(claim.Effect)
	case ledger.ClaimConflict:
		res, err = outcome(mt.InvocationFailed, keyReusedObservation(tool, in))
	case ledger.ClaimSessionClosed:
		res, err = outcome(mt.InvocationFailed, rollingBackObservation(tool, in))
	case ledger.ClaimBusy:
		// Retry when the lease can have expired, not on the usual backoff:
		// if its holder died, backing off by seconds would spend every
		// attempt before the lease runs out and strand the call.
		err = leaseBusy(claim.Effect.LeaseExpiresAt)
	default:
		return res, false, nil
	}
	return res, true, err
}
