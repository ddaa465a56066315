package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/failpoint"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// A composite effect (a page by text and email) is several provider
// effects under one operation key (ADR 14). Each part is its own effect in
// the ledger, keyed {key}#{part}, with its own claim, receipt,
// classification and reconciliation; the key's own effect row is the
// parent, whose claim serialises the attempts and whose outcome is derived
// from the parts once each is settled.

// partState is where one part stands after a pass.
type partState int

const (
	partDelivered partState = iota
	partFailed
	partHeld
	// partRetry: the provider refused retryably, so nothing happened, or
	// (unknown) its answer proved nothing and the catalog has the part
	// sent again; the part's claim is still held until the pass decides
	// what follows.
	partRetry
	// partLater: the part could not be settled in this attempt (its
	// outcome is still being reconciled, or another attempt holds it);
	// its claim is already kept for whoever looks again.
	partLater
)

// partResult is one part's outcome in a pass.
type partResult struct {
	part connectors.Part
	// key is the part's operation key in the ledger.
	key     string
	state   partState
	receipt *mt.Receipt
	err     *connectors.Error
	why     string
	// cause is the retryable error of a partLater part.
	cause error
	// unknown: a partRetry part whose outcome is unknown, sent again as the
	// catalog allows (on_unknown: resend). Its claim is kept, never released,
	// so the next pass knows that its send is a resend.
	unknown bool
}

// partsMode says who runs a pass: the invocation's own call, which answers
// the agent, or the delivery of the parts left after that answer.
type partsMode int

const (
	inCall partsMode = iota
	afterAnswer
)

// compositeEffect performs a composite write: the parent's claim, then each
// part under its own. Parts already settled are never sent again, so a
// retry re-runs only what has no receipt.
func (a *Activities) compositeEffect(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, parts []connectors.Part, mode partsMode) (workflows.InvocationResult, error) {
	owner := leaseOwner(ctx)
	claim, err := a.cfg.Store.EffectClaim(ctx, ledger.EffectClaimParams{
		OperationKey:   in.OperationKey,
		InvocationID:   in.InvocationID,
		Tool:           in.Tool,
		PayloadHash:    in.ArgsHash,
		Owner:          owner,
		LeaseTTL:       a.cfg.LeaseTTL,
		EffectClass:    tool.Effect,
		CatalogVersion: in.CatalogVersion,
		// As for a single effect: a rollback that began before this claim
		// refuses it. The parts are claimed under the parent, so only the
		// parent asks.
		SessionID: claimSession(in),
	})
	if res, done, err := claimAnswer(tool, in, claim, err); done {
		return res, err
	}
	// New or taken over alike: the parent calls no provider itself, so
	// there is nothing to reconcile for it; each part's own claim says
	// what went out.
	results := make([]partResult, 0, len(parts))
	for i, p := range parts {
		if i > 0 {
			// One part is settled and the next not yet sent. The crash
			// test kills the worker here.
			failpoint.Inject(failpoint.BetweenParts)
		}
		r, err := a.part(ctx, tool, in, owner, p)
		var appErr *temporal.ApplicationError
		if err != nil && errors.As(err, &appErr) && appErr.NonRetryable() {
			a.releasePending(ctx, results, nextLeaseOwner(ctx))
			return workflows.InvocationResult{}, a.keepParent(ctx, in, owner, nextLeaseOwner(ctx), err)
		}
		if err != nil {
			// Another part must not wait on this one: a page whose text
			// is being reconciled still sends its email.
			r = partResult{part: p, key: partInput(in, p).OperationKey, state: partLater, cause: err, why: err.Error()}
		}
		results = append(results, r)
	}
	return a.settleParts(ctx, tool, in, owner, claim.Effect, results, mode)
}

// settleParts decides what a pass comes to: retry the parts that failed
// retryably while there is time, answer with what went out and deliver the
// rest afterwards, or settle the parent from its parts.
func (a *Activities) settleParts(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, parent ledger.Effect, results []partResult, mode partsMode) (workflows.InvocationResult, error) {
	var pending []partResult
	delivered, later := 0, 0
	for _, r := range results {
		switch r.state {
		case partRetry:
			pending = append(pending, r)
		case partLater:
			pending = append(pending, r)
			later++
		case partDelivered:
			delivered++
		}
	}
	if len(pending) > 0 && (!lastAttempt(ctx) || later > 0) {
		switch {
		case mode == afterAnswer || a.withinBudget(ctx, parent) || delivered == 0 && later > 0:
			a.releasePending(ctx, results, nextLeaseOwner(ctx))
			return workflows.InvocationResult{}, a.keepParent(ctx, in, owner, nextLeaseOwner(ctx), a.partsRetry(ctx, parent, pending[0], mode))
		case in.Background && delivered > 0:
			return a.answerPart(ctx, tool, in, owner, results)
		case later > 0:
			// Not answerable in part: the retry settles what this attempt
			// could not.
			a.releasePending(ctx, results, nextLeaseOwner(ctx))
			return workflows.InvocationResult{}, a.keepParent(ctx, in, owner, nextLeaseOwner(ctx), a.partsRetry(ctx, parent, pending[0], mode))
		}
	}
	// No time or attempt is left for a part that never went out: it is
	// settled not delivered, and the parent says so. One whose outcome is
	// unknown may have gone out: it is held for a human.
	for i, r := range results {
		if r.state != partRetry {
			continue
		}
		if r.unknown {
			if err := a.settlePart(ctx, tool, in, owner, r.part, mt.EffectNeedsReconciliation, nil, nil, r.err.Error()); err != nil {
				return workflows.InvocationResult{}, err
			}
			results[i].state = partHeld
			continue
		}
		if err := a.settlePart(ctx, tool, in, owner, r.part, mt.EffectFailed, nil, nil, r.err.Error()); err != nil {
			return workflows.InvocationResult{}, err
		}
		results[i].state = partFailed
	}
	return a.settleParent(ctx, tool, in, owner, results)
}

// withinBudget reports whether the call may still retry a part before it
// answers: its budget has not run out, and an attempt will be left after
// the next one to answer with what went out.
func (a *Activities) withinBudget(ctx context.Context, parent ledger.Effect) bool {
	info := activity.GetInfo(ctx)
	if p := info.RetryPolicy; p != nil && p.MaximumAttempts > 0 && info.Attempt+1 >= p.MaximumAttempts {
		return false
	}
	return time.Since(parent.CreatedAt) < a.cfg.PartsBudget
}

// partsRetry is the error that has Temporal run the pass again.
func (a *Activities) partsRetry(ctx context.Context, parent ledger.Effect, r partResult, mode partsMode) error {
	if r.state == partLater {
		return r.cause
	}
	if mode == afterAnswer {
		return retryable(ErrTypeProviderRetry, r.err)
	}
	return temporal.NewApplicationErrorWithOptions(r.err.Error(), ErrTypeProviderRetry,
		temporal.ApplicationErrorOptions{Cause: r.err, NextRetryDelay: a.partsBackoff(ctx, parent)})
}

// partsBackoff spaces the in-call retries of a part so the last one falls
// within the budget.
func (a *Activities) partsBackoff(ctx context.Context, parent ledger.Effect) time.Duration {
	d := time.Duration(activity.GetInfo(ctx).Attempt) * 500 * time.Millisecond
	if left := a.cfg.PartsBudget - time.Since(parent.CreatedAt); d > left {
		d = left
	}
	if d < 100*time.Millisecond {
		d = 100 * time.Millisecond
	}
	return d
}

// answerPart answers the call with what went out while the remaining parts
// are delivered afterwards by the invocation's workflow: the invocation
// stays running, its answer recorded, and the parent's claim is handed to
// the activity that delivers the rest.
func (a *Activities) answerPart(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, results []partResult) (workflows.InvocationResult, error) {
	info := activity.GetInfo(ctx)
	next := fmt.Sprintf("%s/%s/%d", info.WorkflowExecution.RunID, workflows.PartsActivityID, 1)
	a.releasePending(ctx, results, next)
	a.handOverLater(ctx, tool, in, results, next)
	if err := a.cfg.Store.EffectHandOver(ctx, in.OperationKey, owner, next, a.cfg.LeaseTTL); err != nil {
		if errors.Is(err, ledger.ErrLeaseLost) {
			return a.leaseLost(ctx, in)
		}
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error handing the page over to its remaining parts: %w", err))
	}
	obs := withTraceID(ctx, a.partialObservation(ctx, tool, in, results))
	if err := a.cfg.Store.InvocationAnswerPart(ctx, in.InvocationID, obs); err != nil {
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error recording the partial answer: %w", err))
	}
	a.notifySession(ctx, workflows.CallRecord{
		InvocationID: in.InvocationID, OperationKey: in.OperationKey, Tool: in.Tool,
		Route: in.Route, State: mt.InvocationRunning, Summary: obs.Summary,
	}, in.SessionID)
	var names []string
	for _, r := range results {
		if r.state == partRetry || r.state == partLater {
			names = append(names, r.part.Name)
		}
	}
	return workflows.InvocationResult{State: mt.InvocationRunning, Observation: obs, PendingParts: names}, nil
}

// settleParent settles the parent from its settled parts: every part
// delivered is success, any part whose outcome is unknown holds the parent
// for reconciliation, and otherwise the parent failed, its observation
// naming any part that did go out.
func (a *Activities) settleParent(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, results []partResult) (workflows.InvocationResult, error) {
	p := a.parentOutcome(ctx, tool, in, results)
	p.Owner = owner
	return a.settle(ctx, in, p)
}

// parentOutcome is the parent's settlement derived from its settled parts.
func (a *Activities) parentOutcome(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, results []partResult) ledger.EffectSettleParams {
	p := ledger.EffectSettleParams{OperationKey: in.OperationKey}
	delivered, held := 0, 0
	var failure *connectors.Error
	var whys []string
	for _, r := range results {
		switch r.state {
		case partDelivered:
			delivered++
		case partHeld:
			held++
			whys = append(whys, r.part.Name+": "+r.why)
		case partFailed:
			if failure == nil {
				failure = r.err
			}
			whys = append(whys, r.part.Name+": "+r.why)
		}
	}
	switch {
	case delivered == len(results):
		receipt := compositeReceipt(tool, results)
		data := templateData(in, receipt, nil)
		data.Parts = partReceipts(results)
		wording, err := tool.RenderWording(tools.OutcomeSuccess, data)
		if err != nil {
			a.cfg.Logger.ErrorContext(ctx, "success wording failed to render; answering with a fallback derived from the outcome",
				"tool", tool.Name, "operation_key", in.OperationKey, "err", err)
			wording = fallbackReceiptWording(receipt)
		}
		obs := observation.Success(successSummary(tool, receipt), wording, nil, receipt, source(tool, in))
		p.Status, p.Receipt, p.Result = mt.EffectSucceeded, receipt, &obs
	case held > 0:
		obs := unknownObservation(tool, in, strings.Join(whys, "; "))
		if delivered > 0 {
			obs = a.partialObservation(ctx, tool, in, results)
		}
		p.Status, p.Result, p.Error = mt.EffectNeedsReconciliation, &obs, strings.Join(whys, "; ")
	default:
		if failure == nil {
			failure = &connectors.Error{Class: connectors.ClassFailed, Message: strings.Join(whys, "; ")}
		}
		obs := failureObservation(tool, in, failure)
		if delivered > 0 {
			obs = a.partialObservation(ctx, tool, in, results)
		}
		p.Status, p.Result, p.Error = mt.EffectFailed, &obs, strings.Join(whys, "; ")
	}
	return p
}

// deriveHeldParent settles a held parent once a human's decision (or a
// recheck) has settled the last of its held parts, and finishes its
// invocation from all its parts. A parent with a part still held stays
// held.
func (a *Activities) deriveHeldParent(ctx context.Context, held heldEffect, actor string) {
	tool, err := a.tool(held.effect.Tool)
	if err != nil {
		a.cfg.Logger.Warn("could not derive a composite effect from its parts", "operation_key", held.effect.OperationKey, "err", err)
		return
	}
	parentKey, _ := splitPartKey(tool, held.effect.OperationKey)
	in := held.in
	in.OperationKey = parentKey
	parent, err := a.cfg.Store.EffectGet(ctx, parentKey)
	if err != nil || parent.Status != mt.EffectNeedsReconciliation {
		return
	}
	var results []partResult
	for _, name := range tool.Connector.Parts() {
		eff, err := a.cfg.Store.EffectGet(ctx, connectors.PartKey(parentKey, name))
		if err != nil || eff.Status == mt.EffectInProgress || eff.Status == mt.EffectNeedsReconciliation {
			return
		}
		results = append(results, settledPart(connectors.Part{Name: name, Call: connectors.Call{IdempotencyKey: eff.OperationKey}}, eff))
	}
	p := a.parentOutcome(ctx, tool, in, results)
	kind := ledger.ReconciliationNotDelivered
	if p.Status == mt.EffectSucceeded {
		kind = ledger.ReconciliationDelivered
	}
	_, err = a.cfg.Store.EffectReconcile(ctx, ledger.EffectReconcileParams{
		OperationKey: parentKey, Status: p.Status, Receipt: p.Receipt, Result: p.Result, Error: p.Error,
		InvocationState: invocationState(p.Status),
		Event: ledger.ReconciliationEvent{Kind: kind, Actor: actor, Receipt: p.Receipt,
			Reason: "derived from its parts, the last of which was just decided"},
	})
	if err != nil {
		a.cfg.Logger.Warn("could not derive a composite effect from its parts", "operation_key", parentKey, "err", err)
		return
	}
	a.notifySession(ctx, workflows.CallRecord{
		InvocationID: in.InvocationID, OperationKey: parentKey, Tool: in.Tool,
		Route: in.Route, State: invocationState(p.Status), Summary: p.Result.Summary,
	}, in.SessionID)
}

// part runs one part under its own claim: a part already settled is
// reported as the ledger has it, one taken over from a crashed attempt is
// reconciled against the provider before anything is sent.
func (a *Activities) part(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, p connectors.Part) (partResult, error) {
	pin := partInput(in, p)
	claim, resent, done, err := a.claimPart(ctx, tool, in, owner, p)
	if err != nil || done != nil {
		return orEmpty(done), err
	}
	res, err := a.do(ctx, tool, p.Call)
	if err != nil {
		ce := connectors.AsError(err)
		failpoint.Inject(failpoint.AfterProviderError)
		if ce.Class == connectors.ClassUnknown && a.resendsUnknown(tool, p) {
			// Sent again, by a later pass, within the call's budget and
			// then after the answer, like a part that failed retryably.
			return partResult{part: p, key: pin.OperationKey, state: partRetry, unknown: true, err: ce, why: ce.Error()}, nil
		}
		if ce.Class == connectors.ClassUnknown && !failpoint.LedgerBypassed() {
			_, resend, rerr := a.reconcile(ctx, partTool(tool, p), pin, owner, p.Call, claim.Effect, answerLost, ce.Error())
			if rerr != nil {
				return partResult{}, rerr
			}
			if !resend {
				return a.partFromLedger(ctx, pin, p)
			}
			res, err = a.do(ctx, tool, p.Call)
			if err != nil {
				ce = connectors.AsError(err)
			}
		}
		if err != nil {
			r, err := a.partFailure(ctx, tool, in, owner, p, ce)
			// A resend refused retryably leaves the first send's fate as
			// unknown as it was: the claim must still say so.
			r.unknown = resent && r.state == partRetry
			return r, err
		}
	}
	failpoint.Inject(failpoint.AfterProvider)
	return a.recordPart(ctx, tool, in, owner, p, res, resent)
}

// claimPart takes the part's claim. done is set when the part needs no
// send: the ledger already has its outcome, or reconciliation found it.
// resent is set when this send follows one whose outcome is unknown.
func (a *Activities) claimPart(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, p connectors.Part) (claim ledger.EffectClaimResult, resent bool, done *partResult, err error) {
	pin := partInput(in, p)
	claim, err = a.cfg.Store.EffectClaim(ctx, ledger.EffectClaimParams{
		OperationKey:   pin.OperationKey,
		InvocationID:   in.InvocationID,
		Tool:           in.Tool,
		PayloadHash:    in.ArgsHash,
		Owner:          owner,
		LeaseTTL:       a.cfg.LeaseTTL,
		BeforeState:    beforeState(p.Call),
		EffectClass:    tool.Effect,
		CatalogVersion: in.CatalogVersion,
	})
	if err != nil {
		return claim, false, nil, retryable(ErrTypeLedger, fmt.Errorf("error claiming part %s: %w", p.Name, err))
	}
	switch claim.Outcome {
	case ledger.ClaimSettled:
		r := settledPart(p, claim.Effect)
		return claim, false, &r, nil
	case ledger.ClaimConflict:
		return claim, false, nil, nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("part %s holds other arguments than its operation key", pin.OperationKey))
	case ledger.ClaimBusy:
		return claim, false, nil, leaseBusy(claim.Effect.LeaseExpiresAt)
	case ledger.ClaimTakeover:
		if a.resendsUnknown(tool, p) {
			a.logResend(ctx, pin, owner, "an earlier attempt may have sent this part")
			return claim, true, nil, nil
		}
		if failpoint.LedgerBypassed() {
			return claim, false, nil, nil
		}
		_, send, err := a.reconcile(ctx, partTool(tool, p), pin, owner, p.Call, claim.Effect, takenOver,
			"an earlier attempt stopped after it may have sent this part and before recording the answer")
		if err != nil || send {
			return claim, false, nil, err
		}
		r, err := a.partFromLedger(ctx, pin, p)
		if err != nil {
			return claim, false, nil, err
		}
		return claim, false, &r, nil
	}
	return claim, false, nil, nil
}

// recordPart settles a part the provider answered: delivered with a
// receipt that proves it, held for a human without one.
func (a *Activities) recordPart(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, p connectors.Part, res connectors.Result, resent bool) (partResult, error) {
	key := partInput(in, p).OperationKey
	if resent && res.Receipt != nil {
		res.Receipt = resentReceipt(res.Receipt)
	}
	if err := checkReceipt(partTool(tool, p), res.Receipt); err != nil {
		why := "the provider answered but did not prove the part: " + err.Error()
		return partResult{part: p, key: key, state: partHeld, why: why}, a.settlePart(ctx, tool, in, owner, p, mt.EffectNeedsReconciliation, nil, nil, why)
	}
	if err := a.settlePart(ctx, tool, in, owner, p, mt.EffectSucceeded, res.Receipt, res.Payload, ""); err != nil {
		return partResult{}, err
	}
	return partResult{part: p, key: key, state: partDelivered, receipt: res.Receipt}, nil
}

func orEmpty(r *partResult) partResult {
	if r == nil {
		return partResult{}
	}
	return *r
}

// partFailure classifies a part's error: retryable keeps the claim for the
// pass to decide, unknown holds the part, anything else failed.
func (a *Activities) partFailure(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, p connectors.Part, ce *connectors.Error) (partResult, error) {
	key := partInput(in, p).OperationKey
	switch {
	case ce.Retryable():
		return partResult{part: p, key: key, state: partRetry, err: ce, why: ce.Error()}, nil
	case ce.Class == connectors.ClassUnknown:
		return partResult{part: p, key: key, state: partHeld, err: ce, why: ce.Error()},
			a.settlePart(ctx, tool, in, owner, p, mt.EffectNeedsReconciliation, nil, nil, ce.Error())
	}
	return partResult{part: p, key: key, state: partFailed, err: ce, why: ce.Error()},
		a.settlePart(ctx, tool, in, owner, p, mt.EffectFailed, nil, nil, ce.Error())
}

// settlePart settles a part's claim. Its stored result says only what the
// part's own receipt proves; the person hears the parent's wording.
func (a *Activities) settlePart(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, p connectors.Part, status mt.EffectStatus, receipt *mt.Receipt, payload []byte, why string) error {
	pin := partInput(in, p)
	src := source(tool, pin)
	var obs mt.Observation
	switch status {
	case mt.EffectSucceeded:
		obs = observation.Success(fmt.Sprintf("part %s of %s confirmed by %s (id %s)", p.Name, tool.Name, receipt.Provider, receipt.ID),
			fallbackReceiptWording(receipt), payload, receipt, src)
	case mt.EffectNeedsReconciliation:
		obs = observation.Pending(observation.Failure{Code: mt.CodeOutcomeUnknown, Summary: fmt.Sprintf("Outcome of part %s of %s is unknown; held for reconciliation", p.Name, tool.Name), RootCause: why}, src)
	default:
		obs = observation.Error(observation.Failure{Code: mt.CodeProviderUnavailable, Summary: fmt.Sprintf("part %s of %s was not delivered", p.Name, tool.Name), RootCause: why}, src)
	}
	err := a.cfg.Store.EffectSettle(ctx, ledger.EffectSettleParams{
		OperationKey: pin.OperationKey, Owner: owner, Status: status, Receipt: receipt, AfterState: payload, Result: &obs, Error: why,
	})
	if errors.Is(err, ledger.ErrLeaseLost) {
		return retryable(ErrTypeLeaseBusy, fmt.Errorf("part %s was taken over by another attempt", pin.OperationKey))
	}
	if err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error settling part %s: %w", pin.OperationKey, err))
	}
	return nil
}

// partFromLedger reports a part as reconciliation settled it.
func (a *Activities) partFromLedger(ctx context.Context, pin workflows.ExecuteInput, p connectors.Part) (partResult, error) {
	eff, err := a.cfg.Store.EffectGet(ctx, pin.OperationKey)
	if err != nil {
		return partResult{}, retryable(ErrTypeLedger, fmt.Errorf("error reading part %s: %w", p.Name, err))
	}
	if eff.Status == mt.EffectInProgress {
		return partResult{}, retryable(ErrTypeLeaseBusy, fmt.Errorf("part %s is still in progress under another attempt", eff.OperationKey))
	}
	return settledPart(p, eff), nil
}

func settledPart(p connectors.Part, eff ledger.Effect) partResult {
	r := partResult{part: p, key: eff.OperationKey, receipt: eff.Receipt, why: eff.Error}
	switch eff.Status {
	case mt.EffectSucceeded:
		r.state = partDelivered
	case mt.EffectNeedsReconciliation:
		r.state = partHeld
	default:
		r.state = partFailed
		r.err = &connectors.Error{Class: connectors.ClassFailed, Message: eff.Error}
	}
	return r
}

// releasePending hands back the claims of parts that failed retryably:
// nothing happened at their provider, so the next pass claims them afresh.
// A part whose outcome is unknown may have gone out, so its claim is
// handed to next instead: taking it over, that pass knows it resends.
func (a *Activities) releasePending(ctx context.Context, results []partResult, next string) {
	owner := leaseOwner(ctx)
	for _, r := range results {
		if r.state != partRetry {
			continue
		}
		if r.unknown {
			if err := a.cfg.Store.EffectHandOver(ctx, r.key, owner, next, a.cfg.LeaseTTL); err != nil {
				// The lease runs out on its own and the next pass takes
				// the part over all the same.
				a.cfg.Logger.Warn("could not hand a part's claim to the next attempt", "operation_key", r.key, "err", err)
			}
			continue
		}
		if err := a.cfg.Store.EffectRelease(ctx, r.key, owner); err != nil {
			// The lease runs out on its own; the next pass then takes the
			// part over and finds, by reconciling, that nothing was sent.
			a.cfg.Logger.Warn("could not release a part's claim", "operation_key", r.key, "err", err)
		}
	}
}

// handOverLater hands to next the claims of parts still being reconciled,
// which this attempt handed to its own retry: the call is answered, so that
// retry never runs, and the delivery after the answer takes them over at
// once instead of waiting for their leases to run out. The claim is taken
// in the retry's name, which only the attempt it was handed to may do, and
// passed on; a part another attempt holds is left to it.
func (a *Activities) handOverLater(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, results []partResult, next string) {
	kept := nextLeaseOwner(ctx)
	for _, r := range results {
		if r.state != partLater {
			continue
		}
		claim, err := a.cfg.Store.EffectClaim(ctx, ledger.EffectClaimParams{
			OperationKey:   r.key,
			InvocationID:   in.InvocationID,
			Tool:           in.Tool,
			PayloadHash:    in.ArgsHash,
			Owner:          kept,
			LeaseTTL:       a.cfg.LeaseTTL,
			BeforeState:    beforeState(r.part.Call),
			EffectClass:    tool.Effect,
			CatalogVersion: in.CatalogVersion,
		})
		if err == nil && claim.Outcome != ledger.ClaimTakeover {
			// Settled meanwhile, or held by another attempt: nothing of
			// this attempt's to pass on.
			continue
		}
		if err == nil {
			err = a.cfg.Store.EffectHandOver(ctx, r.key, kept, next, a.cfg.LeaseTTL)
		}
		if err != nil {
			a.cfg.Logger.Warn("could not hand a part's claim to its delivery; it waits for the lease to run out",
				"operation_key", r.key, "err", err)
		}
	}
}

// keepParent hands the parent's claim to the attempt that retries this
// one and returns cause, the error that asks for that retry.
func (a *Activities) keepParent(ctx context.Context, in workflows.ExecuteInput, owner, next string, cause error) error {
	if err := a.cfg.Store.EffectHandOver(ctx, in.OperationKey, owner, next, a.cfg.LeaseTTL); err != nil && !errors.Is(err, ledger.ErrLeaseLost) {
		a.cfg.Logger.Warn("could not hand the parent's claim to the next attempt; it waits for the lease to run out",
			"operation_key", in.OperationKey, "err", err)
	}
	return cause
}

// partialObservation is what the person hears when some parts went out:
// the tool's partial wording, from each delivered part's receipt, with the
// tool's safety notice. The payload lists every part's state.
func (a *Activities) partialObservation(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, results []partResult) mt.Observation {
	data := templateData(in, nil, nil)
	data.Parts = partReceipts(results)
	wording, err := tool.RenderWording(tools.OutcomePartial, data)
	if err != nil {
		a.cfg.Logger.ErrorContext(ctx, "partial wording failed to render; answering with a fallback derived from the parts",
			"tool", tool.Name, "operation_key", in.OperationKey, "err", err)
		wording = tools.WithNotice(fallbackPartialWording(results), tool.RenderNotice(data))
	}
	var sent, unsent []string
	payload := map[string]map[string]string{}
	for _, r := range results {
		st := map[string]string{"operation_key": r.key}
		switch r.state {
		case partDelivered:
			st["state"], st["receipt_id"] = "delivered", r.receipt.ID
			sent = append(sent, fmt.Sprintf("%s (%s)", r.part.Name, r.receipt.ID))
		case partRetry, partLater:
			st["state"] = "retrying"
			unsent = append(unsent, r.part.Name+" (retrying)")
		case partHeld:
			st["state"] = "unknown"
			unsent = append(unsent, r.part.Name+" (outcome unknown)")
		default:
			st["state"] = "not_delivered"
			unsent = append(unsent, r.part.Name+" (not delivered)")
		}
		if r.why != "" && r.state != partDelivered {
			st["error"] = r.why
		}
		payload[r.part.Name] = st
	}
	f := observation.Failure{
		Code:          mt.CodePartlyDelivered,
		Summary:       fmt.Sprintf("%s went out in part: %s sent; %s", tool.Name, strings.Join(sent, ", "), strings.Join(unsent, ", ")),
		RootCause:     "Each part is its own effect at its own provider; only some have a receipt.",
		Remediation:   "Tell the person exactly what went out, as the wording says. Do not call again: parts still retrying are delivered by maestro, and you hear how they ended.",
		StopCondition: "Never claim a part without a receipt.",
		Wording:       wording,
		Payload:       map[string]any{"parts": payload},
	}
	for _, r := range results {
		if r.state == partRetry || r.state == partLater {
			return observation.Pending(f, source(tool, in))
		}
	}
	return observation.Warning(f, source(tool, in))
}

// fallbackPartialWording names what went out by its provider reference
// alone, for a partial wording that failed to render.
func fallbackPartialWording(results []partResult) string {
	var refs []string
	for _, r := range results {
		if r.state == partDelivered && r.receipt != nil {
			refs = append(refs, r.receipt.ID)
		}
	}
	return fmt.Sprintf("Part of that went through (reference %s); the rest hasn't yet.", strings.Join(refs, ", "))
}

// compositeReceipt is the parent's receipt once every part is delivered:
// the parts' fields together, under an ID naming them all (each part's
// own receipt stays on its part, where reconciliation looks for it).
func compositeReceipt(tool *tools.Tool, results []partResult) *mt.Receipt {
	fields := map[string]string{}
	var ids, providers []string
	for _, r := range results {
		for k, v := range r.receipt.Fields {
			if _, ok := fields[k]; !ok {
				fields[k] = v
			}
		}
		ids = append(ids, r.receipt.ID)
		providers = append(providers, r.receipt.Provider)
	}
	return &mt.Receipt{
		Provider: strings.Join(providers, "+"),
		ID:       strings.Join(ids, "+"),
		Status:   results[0].receipt.Status,
		Fields:   fields,
		IssuedAt: time.Now().UTC(),
	}
}

func partReceipts(results []partResult) map[string]*mt.Receipt {
	out := map[string]*mt.Receipt{}
	for _, r := range results {
		if r.state == partDelivered {
			out[r.part.Name] = r.receipt
		}
	}
	return out
}

// partInput is the invocation's input as seen by one part: its own key.
func partInput(in workflows.ExecuteInput, p connectors.Part) workflows.ExecuteInput {
	pin := in
	pin.OperationKey = connectors.PartKey(in.OperationKey, p.Name)
	return pin
}

// partTool is the tool as one part's reconciliation sees it: the part's
// connector and the receipt fields that part alone produces.
func partTool(tool *tools.Tool, p connectors.Part) *tools.Tool {
	pt := *tool
	pt.Connector = tools.Connector{Kind: p.Call.Kind}
	pt.ReceiptFields = pt.Connector.ProofFields()
	pt.Wording = tools.Wording{}
	return &pt
}

// DeliverParts delivers the parts of an invocation's composite effect that
// had not gone out when the call was answered, retried by Temporal for as
// long as the workflow allows, and finishes the invocation from all its
// parts. The session hears the final outcome, and the agent, answered 202
// while parts were pending, gets it at its callback (ADR 12).
func (a *Activities) DeliverParts(ctx context.Context, in workflows.ExecuteInput) (workflows.InvocationResult, error) {
	tool, err := a.admittedTool(ctx, &in)
	if err != nil {
		return workflows.InvocationResult{}, err
	}
	call, err := renderCall(tool, in)
	if err != nil {
		return workflows.InvocationResult{}, nonRetryable(workflows.ErrTypeInvariant, err)
	}
	parts, ok := a.cfg.Connectors.Parts(call)
	if !ok {
		return workflows.InvocationResult{}, nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("tool %s has no parts to deliver", in.Tool))
	}
	res, err := a.compositeEffect(ctx, tool, in, parts, afterAnswer)
	if err != nil {
		return res, err
	}
	return a.finish(ctx, in, res.State, res.Observation)
}

// resendsUnknown reports whether a part whose outcome is unknown is sent
// again rather than held: the tool's row says on_unknown: resend, and the
// part's provider can neither be searched nor deduplicate on our key. A
// part that can be searched is always reconciled by searching first.
func (a *Activities) resendsUnknown(tool *tools.Tool, p connectors.Part) bool {
	return tool.Resends() && tool.Effect != mt.EffectMoney &&
		!a.cfg.Connectors.Searchable(p.Call.Kind) && !p.Call.Replayable()
}

// logResend records in the reconciliation log that a part is sent again
// with its outcome unknown, so that a duplicate is never a surprise.
func (a *Activities) logResend(ctx context.Context, pin workflows.ExecuteInput, owner, why string) {
	a.cfg.Logger.WarnContext(ctx, "sending a part again whose outcome is unknown; a duplicate is possible",
		"operation_key", pin.OperationKey, "reason", why)
	a.logFinding(ctx, ledger.ReconciliationEvent{
		OperationKey: pin.OperationKey, Kind: ledger.ReconciliationReplayed, Actor: "reconciler:" + owner,
		Reason: why + "; its provider cannot be searched and the catalog has it sent again (on_unknown: resend): a duplicate is possible",
	})
}

// resentReceipt is the receipt of a resend, saying so.
func resentReceipt(r *mt.Receipt) *mt.Receipt {
	out := *r
	out.Fields = make(map[string]string, len(r.Fields)+1)
	for k, v := range r.Fields {
		out.Fields[k] = v
	}
	out.Fields[mt.ReceiptResentAfterUnknown] = "true"
	return &out
}
