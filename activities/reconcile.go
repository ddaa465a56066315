package activities

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// lookupSkew widens a provider search back before the key was first
// claimed: the provider stamps its records with its own clock, not the
// ledger's. A wider window costs nothing in safety, since a record the
// ledger already credits to another key is never adopted.
const lookupSkew = 2 * time.Minute

// HumanAttested is the receipt provider of an effect recorded as done on a
// human's word. It is never a provider's proof, and the wording that goes
// with it claims nothing.
const HumanAttested = "human-attested"

// ErrUnresolved means the provider's records do not settle an effect held
// for reconciliation: a human must decide.
var ErrUnresolved = errors.New("the provider's records do not settle this effect")

// ErrNeedsRole means the operator lacks the role a decision needs.
var ErrNeedsRole = errors.New("operator lacks the role this decision needs")

// unknownCause is why an effect's outcome is unknown. It decides how much
// an empty search of the provider's records proves.
type unknownCause int

const (
	// takenOver: an earlier attempt stopped while holding the key. Either
	// its lease has since expired, so its call ended at least a lease ago,
	// or it handed the key to this attempt and Temporal held this attempt
	// back for the listing lag (retryLater): long enough, either way, for
	// the provider's records to show the call.
	takenOver unknownCause = iota
	// answerLost: this attempt's own call went unanswered a moment ago; the
	// provider's records may not show it yet.
	answerLost
)

// reconcile runs before anything is sent again for an operation key whose
// earlier call may have reached the provider without its answer being
// recorded. It settles the key from the provider's own records where it
// can, holds it for a human where it cannot, and reports send=true only
// when sending is safe: the provider deduplicates on our key, or a
// complete search made long enough after the call found no trace of it.
func (a *Activities) reconcile(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, call connectors.Call, eff ledger.Effect, cause unknownCause, why string) (res workflows.InvocationResult, send bool, err error) {
	actor := "reconciler:" + owner
	if tool.Effect == mt.EffectMoney {
		// Even a provider that deduplicates is not trusted alone with
		// money whose fate is unknown: a person looks at the books first.
		res, err := a.escalate(ctx, tool, in, owner, why+"; money whose outcome is unknown moves only on a human's decision")
		return res, false, err
	}
	if call.Replayable() {
		a.logFinding(ctx, ledger.ReconciliationEvent{
			OperationKey: in.OperationKey, Kind: ledger.ReconciliationReplayed, Actor: actor,
			Reason: why + "; sent again under the same Idempotency-Key, so the provider answers for the first send",
		})
		return workflows.InvocationResult{}, true, nil
	}
	found, err := a.cfg.Connectors.Lookup(ctx, call, eff.CreatedAt.Add(-lookupSkew))
	if err != nil {
		if !errors.Is(err, connectors.ErrNotSearchable) && !lastAttempt(ctx) {
			// The search itself failed: nothing is known yet, and nothing
			// is sent; look again later under the same claim.
			res, err := a.retryLater(ctx, in, owner, a.cfg.ListingLag, why+"; "+lookupFailure(err))
			return res, false, err
		}
		res, err := a.escalate(ctx, tool, in, owner, why+"; "+lookupFailure(err))
		return res, false, err
	}
	matches, err := a.unclaimed(ctx, in.OperationKey, found.Matches)
	if err != nil {
		return workflows.InvocationResult{}, false, retryable(ErrTypeLedger, err)
	}
	switch {
	case len(matches) == 1:
		res, err := a.adopt(ctx, tool, in, owner, matches[0], why)
		return res, false, err
	case len(matches) > 1:
		res, err := a.escalate(ctx, tool, in, owner, fmt.Sprintf("%s; the provider holds %d matching records (%s) and only a human can say which, if any, is this call's",
			why, len(matches), receiptIDs(matches)))
		return res, false, err
	case !found.Complete:
		res, err := a.escalate(ctx, tool, in, owner, why+"; the provider's records could not all be searched")
		return res, false, err
	case cause == answerLost && !lastAttempt(ctx):
		// Not resent yet: an answer lost a moment ago may belong to a
		// record the provider has not listed yet. The claim is kept and the
		// retry, once the listing lag has passed, takes it over; its
		// complete search then proves the effect absent, or finds it.
		res, err := a.retryLater(ctx, in, owner, a.cfg.ListingLag,
			why+"; the provider lists no such effect yet, which is not proof so soon after the call: looking again after the listing lag")
		return res, false, err
	case cause == answerLost:
		res, err := a.escalate(ctx, tool, in, owner, why+"; the provider shows no such effect yet, which is not proof so soon after the call, and no attempt is left to look again: check again later")
		return res, false, err
	}
	a.logFinding(ctx, ledger.ReconciliationEvent{
		OperationKey: in.OperationKey, Kind: ledger.ReconciliationAbsent, Actor: actor,
		Reason: why + "; the provider's records since the claim hold no such effect, so it is sent now",
	})
	return workflows.InvocationResult{}, true, nil
}

// adopt settles the key with the provider's record of the effect, exactly
// as if the lost answer had arrived: succeeded with the record's receipt,
// or failed if the record's own status says the effect failed. The ledger
// refuses the record, in the same transaction, if another key holds it
// already; the key is then held for a human.
func (a *Activities) adopt(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, found connectors.Match, why string) (workflows.InvocationResult, error) {
	if err := checkReceipt(tool, found.Receipt); err != nil {
		return a.escalate(ctx, tool, in, owner, why+"; the provider's matching record does not prove the effect: "+err.Error())
	}
	p := ledger.EffectReconcileParams{
		OperationKey: in.OperationKey,
		Owner:        owner,
		Receipt:      found.Receipt,
		AfterState:   found.Payload,
		Event: ledger.ReconciliationEvent{
			Kind: ledger.ReconciliationAdopted, Actor: "reconciler:" + owner, Receipt: found.Receipt,
			Reason: fmt.Sprintf("%s; adopted %s, the provider's only matching record not credited to another key: %s", why, found.Receipt.ID, found.Evidence),
		},
	}
	if connectors.ReceiptStatusMeaning(found.Receipt) == connectors.StatusFailed {
		obs := failureObservation(tool, in, &connectors.Error{Class: connectors.ClassFailed, Provider: found.Receipt.Provider,
			Message: fmt.Sprintf("the provider's record %s, found after its answer was lost, has status %s", found.Receipt.ID, found.Receipt.Status)})
		p.Status, p.Result, p.Error = mt.EffectFailed, &obs, obs.NextActions.RootCause
	} else {
		obs := a.adoptedObservation(ctx, tool, in, found.Result)
		p.Status, p.Result = mt.EffectSucceeded, &obs
	}
	res, err := a.settleFinding(ctx, in, p)
	if errors.Is(err, ledger.ErrReceiptTaken) {
		return a.escalate(ctx, tool, in, owner, fmt.Sprintf(
			"%s; the matching record %s belongs to another operation key, as the ledger found when settling, so only a human can say whether this call had an effect",
			why, found.Receipt.ID))
	}
	return res, err
}

// retryLater keeps the claim for the attempt that retries this one: the
// claim is handed over to that attempt by name, so it takes the claim over
// (and reconciles before anything is sent) whenever it runs, and Temporal
// is asked to run it once delay has passed. The lease still ends, for any
// other claimer, if that attempt never comes.
func (a *Activities) retryLater(ctx context.Context, in workflows.ExecuteInput, owner string, delay time.Duration, why string) (workflows.InvocationResult, error) {
	a.cfg.Logger.Info("outcome not settled yet; looking again later", "operation_key", in.OperationKey, "after", delay, "why", why)
	if err := a.cfg.Store.EffectHandOver(ctx, in.OperationKey, owner, nextLeaseOwner(ctx), delay+a.cfg.LeaseTTL); err != nil {
		if errors.Is(err, ledger.ErrLeaseLost) {
			return a.leaseLost(ctx, in)
		}
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error keeping the claim for a later look: %w", err))
	}
	return workflows.InvocationResult{}, lookAgain(why, delay)
}

// unknownAgain settles a second answer that proves nothing, from the call
// that reconciliation allowed. It is never resent from here: the retry
// takes the claim over and reconciles again (a replay under the provider's
// idempotency key at once, a search once the listing lag has passed). With
// no attempt left, the key is held for a human.
func (a *Activities) unknownAgain(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, call connectors.Call, ce *connectors.Error) (workflows.InvocationResult, error) {
	if ce.Class != connectors.ClassUnknown {
		return a.settleFailure(ctx, tool, in, owner, ce)
	}
	if lastAttempt(ctx) {
		return a.escalate(ctx, tool, in, owner, ce.Error()+"; no attempt is left to reconcile it again")
	}
	delay := a.cfg.ListingLag
	if call.Replayable() {
		// A service failing the replay too gets the retry policy's
		// backoff; the replay itself needs no wait.
		delay = 0
	}
	return a.retryLater(ctx, in, owner, delay, ce.Error())
}

// escalate holds the key in needs_reconciliation for a human: it is listed
// for ops, and nothing is sent for it again.
func (a *Activities) escalate(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner, why string) (workflows.InvocationResult, error) {
	a.cfg.Logger.Warn("effect held for a human to reconcile", "operation_key", in.OperationKey, "tool", in.Tool, "why", why)
	obs := unknownObservation(tool, in, why)
	res, err := a.settleFinding(ctx, in, ledger.EffectReconcileParams{
		OperationKey: in.OperationKey,
		Owner:        owner,
		Status:       mt.EffectNeedsReconciliation,
		Result:       &obs,
		Error:        why,
		Event:        ledger.ReconciliationEvent{Kind: ledger.ReconciliationEscalated, Actor: "reconciler:" + owner, Reason: why},
	})
	if err == nil && res.State == mt.InvocationNeedsReconciliation {
		a.pageHeldMoney(in.Tool, in.OperationKey, why)
	}
	return res, err
}

// settleFinding is settle for an outcome reconciliation decided: the
// effect and the finding that explains it commit together. A receipt
// another key holds comes back as ledger.ErrReceiptTaken, unwrapped for the
// caller to decide on.
func (a *Activities) settleFinding(ctx context.Context, in workflows.ExecuteInput, p ledger.EffectReconcileParams) (workflows.InvocationResult, error) {
	_, err := a.cfg.Store.EffectReconcile(ctx, p)
	if errors.Is(err, ledger.ErrLeaseLost) {
		return a.leaseLost(ctx, in)
	}
	if errors.Is(err, ledger.ErrReceiptTaken) {
		return workflows.InvocationResult{}, ledger.ErrReceiptTaken
	}
	if err != nil {
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error settling reconciled effect: %w", err))
	}
	return outcome(invocationState(p.Status), *p.Result)
}

// logFinding records a finding that settles nothing by itself. The send
// that follows it is what the ledger then records, so a finding lost to a
// failed write costs the log a line, never the effect its guard.
func (a *Activities) logFinding(ctx context.Context, e ledger.ReconciliationEvent) {
	if _, err := a.cfg.Store.ReconciliationEventInsert(ctx, e); err != nil {
		a.cfg.Logger.Warn("could not log a reconciliation finding", "operation_key", e.OperationKey, "kind", e.Kind, "err", err)
	}
}

// unclaimed drops the matches the ledger already credits to another
// operation key: the same text to the same number, sent for another
// effect, must not be mistaken for this one.
func (a *Activities) unclaimed(ctx context.Context, operationKey string, matches []connectors.Match) ([]connectors.Match, error) {
	var out []connectors.Match
	for _, m := range matches {
		owners, err := a.cfg.Store.EffectListByReceiptID(ctx, m.Receipt.ID)
		if err != nil {
			return nil, fmt.Errorf("error checking whom the ledger credits with %s: %w", m.Receipt.ID, err)
		}
		mine := true
		for _, o := range owners {
			if o.OperationKey != operationKey {
				mine = false
			}
		}
		if mine {
			out = append(out, m)
		}
	}
	return out, nil
}

// Decision is a human's finding on an effect held for reconciliation.
type Decision struct {
	OperationKey string
	// Delivered says whether the effect happened.
	Delivered bool
	// Operator decides; their roles are checked against the effect.
	Operator *tools.Operator
	// Reason is what the human checked, and is required: the decision is
	// only as good as its grounds.
	Reason string
}

// ReconcilerRole is the operator role that may decide a held effect. Money
// needs the tool's approver role as well.
const ReconcilerRole = "ops"

// Resolve settles a held effect on a human's word. Delivered settles it
// succeeded with a receipt marked human-attested, never a provider's ID;
// not delivered settles it failed, so the agent may try again under a new
// operation key. The invocation is finished in the same transaction, and
// the decision is appended to the key's reconciliation log.
func (a *Activities) Resolve(ctx context.Context, d Decision) (ledger.Effect, error) {
	if strings.TrimSpace(d.Reason) == "" {
		return ledger.Effect{}, errors.New("a decision needs a reason: what was checked, and where")
	}
	held, err := a.held(ctx, d.OperationKey)
	if err != nil {
		return ledger.Effect{}, err
	}
	if err := mayDecide(d.Operator, held.tool); err != nil {
		return ledger.Effect{}, err
	}
	actor := "operator:" + d.Operator.ID
	p := ledger.EffectReconcileParams{OperationKey: d.OperationKey}
	if d.Delivered {
		receipt := &mt.Receipt{
			Provider: HumanAttested,
			ID:       attestationID(),
			Status:   "attested",
			Fields:   map[string]string{mt.ReceiptAttestedBy: actor, mt.ReceiptReason: d.Reason},
			IssuedAt: time.Now().UTC(),
		}
		obs := attestedObservation(held.tool, held.in, receipt, actor)
		p.Status, p.Receipt, p.Result, p.InvocationState = mt.EffectSucceeded, receipt, &obs, mt.InvocationSucceeded
		p.Event = ledger.ReconciliationEvent{Kind: ledger.ReconciliationDelivered, Actor: actor, Reason: d.Reason, Receipt: receipt}
	} else {
		obs := notDeliveredObservation(held.tool, held.in, actor+" found that it did not happen: "+d.Reason)
		p.Status, p.Result, p.Error, p.InvocationState = mt.EffectFailed, &obs, d.Reason, mt.InvocationFailed
		p.Event = ledger.ReconciliationEvent{Kind: ledger.ReconciliationNotDelivered, Actor: actor, Reason: d.Reason}
	}
	return a.settleHeld(ctx, held, p)
}

// Recheck searches the provider again for an effect held for
// reconciliation, as an operator asked: exactly one unclaimed match
// settles it succeeded with the provider's receipt, and a complete search
// that finds nothing settles it failed. Anything else leaves it held and
// returns ErrUnresolved. It never sends anything.
func (a *Activities) Recheck(ctx context.Context, operationKey string, op *tools.Operator) (ledger.Effect, error) {
	held, err := a.held(ctx, operationKey)
	if err != nil {
		return ledger.Effect{}, err
	}
	if err := mayDecide(op, held.tool); err != nil {
		return ledger.Effect{}, err
	}
	if held.tool.Effect == mt.EffectMoney {
		return held.effect, fmt.Errorf("%w: money whose outcome is unknown is settled by a human", ErrUnresolved)
	}
	found, err := a.cfg.Connectors.Lookup(ctx, held.call, held.effect.CreatedAt.Add(-lookupSkew))
	if err != nil {
		return held.effect, fmt.Errorf("%w: %s", ErrUnresolved, lookupFailure(err))
	}
	matches, err := a.unclaimed(ctx, operationKey, found.Matches)
	if err != nil {
		return ledger.Effect{}, err
	}
	actor := "reconciler:operator:" + op.ID
	p := ledger.EffectReconcileParams{OperationKey: operationKey}
	switch {
	case len(matches) == 1:
		m := matches[0]
		if err := checkReceipt(held.tool, m.Receipt); err != nil {
			return held.effect, fmt.Errorf("%w: the matching record does not prove the effect: %v", ErrUnresolved, err)
		}
		p.Receipt, p.AfterState = m.Receipt, m.Payload
		p.Event = ledger.ReconciliationEvent{Kind: ledger.ReconciliationAdopted, Actor: actor, Receipt: m.Receipt,
			Reason: fmt.Sprintf("checked on request; adopted %s, the provider's only matching record not credited to another key: %s", m.Receipt.ID, m.Evidence)}
		if connectors.ReceiptStatusMeaning(m.Receipt) == connectors.StatusFailed {
			obs := failureObservation(held.tool, held.in, &connectors.Error{Class: connectors.ClassFailed, Provider: m.Receipt.Provider,
				Message: fmt.Sprintf("the provider's record %s has status %s", m.Receipt.ID, m.Receipt.Status)})
			p.Status, p.Result, p.Error, p.InvocationState = mt.EffectFailed, &obs, obs.NextActions.RootCause, mt.InvocationFailed
		} else {
			obs := a.adoptedObservation(ctx, held.tool, held.in, m.Result)
			p.Status, p.Result, p.InvocationState = mt.EffectSucceeded, &obs, mt.InvocationSucceeded
		}
	case len(matches) > 1:
		return held.effect, fmt.Errorf("%w: the provider holds %d matching records (%s)", ErrUnresolved, len(matches), receiptIDs(matches))
	case !found.Complete:
		return held.effect, fmt.Errorf("%w: the provider's records could not all be searched", ErrUnresolved)
	default:
		why := "checked on request; the provider's records since the claim hold no such effect"
		obs := notDeliveredObservation(held.tool, held.in, why)
		p.Status, p.Result, p.Error, p.InvocationState = mt.EffectFailed, &obs, why, mt.InvocationFailed
		p.Event = ledger.ReconciliationEvent{Kind: ledger.ReconciliationAbsent, Actor: actor, Reason: why}
	}
	eff, err := a.settleHeld(ctx, held, p)
	if errors.Is(err, ledger.ErrReceiptTaken) {
		return held.effect, fmt.Errorf("%w: the matching record %s belongs to another operation key", ErrUnresolved, p.Receipt.ID)
	}
	return eff, err
}

// heldEffect is an effect held for reconciliation with what deciding it
// needs: its tool, the execution it came from, and the call it made.
type heldEffect struct {
	effect ledger.Effect
	tool   *tools.Tool
	in     workflows.ExecuteInput
	call   connectors.Call
	// part names the part of a composite effect the held effect is, or
	// is empty; in is then its parent's invocation (ADR 14).
	part string
}

func (a *Activities) held(ctx context.Context, operationKey string) (heldEffect, error) {
	eff, err := a.cfg.Store.EffectGet(ctx, operationKey)
	if err != nil {
		return heldEffect{}, err
	}
	if eff.Status != mt.EffectNeedsReconciliation {
		return heldEffect{effect: eff}, fmt.Errorf("%w (it is %s)", ledger.ErrEffectNotHeld, eff.Status)
	}
	tool, err := a.tool(eff.Tool)
	if err != nil {
		return heldEffect{}, err
	}
	parentKey, part := splitPartKey(tool, operationKey)
	if part == "" && len(tool.Connector.Parts()) > 0 {
		return heldEffect{}, fmt.Errorf("%w: %s goes out in parts; decide each held part (%s#%s)", ErrUnresolved,
			operationKey, operationKey, strings.Join(tool.Connector.Parts(), ", "+operationKey+"#"))
	}
	inv, err := a.cfg.Store.InvocationGetByKey(ctx, parentKey)
	if err != nil {
		return heldEffect{}, fmt.Errorf("error reading the invocation of %s: %w", operationKey, err)
	}
	in := workflows.ExecuteInput{
		InvocationID: inv.ID, OperationKey: inv.OperationKey, SessionID: inv.SessionID,
		Tool: inv.Tool, Route: inv.Route, Args: inv.Args, ArgsHash: inv.ArgsHash,
	}
	if inv.Route == mt.RouteGated {
		// What ran is what the approver approved, which a modify may have
		// changed.
		req, err := a.cfg.Store.ApprovalRequestGetByKey(ctx, parentKey)
		if err != nil {
			return heldEffect{}, fmt.Errorf("error reading the approval of %s: %w", operationKey, err)
		}
		in.ApprovalID, in.Args, in.ArgsHash = req.ID, req.Args, req.ArgsHash
	}
	call, err := sentCall(eff)
	if err != nil {
		return heldEffect{}, err
	}
	call.IdempotencyKey = operationKey
	if part != "" {
		tool = partTool(tool, connectors.Part{Name: part, Call: call})
		in.OperationKey = operationKey
	}
	return heldEffect{effect: eff, tool: tool, in: in, call: call, part: part}, nil
}

// splitPartKey splits the key of a composite tool's part into its
// parent's key and the part's name; any other key is its own parent.
func splitPartKey(tool *tools.Tool, key string) (parent, part string) {
	i := strings.LastIndex(key, "#")
	if i < 0 || !slices.Contains(tool.Connector.Parts(), key[i+1:]) {
		return key, ""
	}
	return key[:i], key[i+1:]
}

// settleHeld commits a decision on a held effect and tells the session.
func (a *Activities) settleHeld(ctx context.Context, held heldEffect, p ledger.EffectReconcileParams) (ledger.Effect, error) {
	if held.part != "" {
		// A part's decision finishes nothing by itself: the parent, and
		// with it the invocation, follows from all its parts.
		p.InvocationState = ""
	}
	eff, err := a.cfg.Store.EffectReconcile(ctx, p)
	if err != nil {
		return eff, err
	}
	if held.part != "" {
		a.deriveHeldParent(ctx, held, p.Event.Actor)
		return eff, nil
	}
	a.notifySession(ctx, workflows.CallRecord{
		InvocationID: held.in.InvocationID, OperationKey: held.in.OperationKey, Tool: held.in.Tool,
		Route: held.in.Route, State: p.InvocationState, Summary: p.Result.Summary,
	}, held.in.SessionID)
	return eff, nil
}

// sentCall reads back the provider call an effect recorded before it was
// sent (see beforeState): the call to look for is the one that went out,
// not one rendered afresh from a catalog that may have changed since.
func sentCall(eff ledger.Effect) (connectors.Call, error) {
	var sent struct {
		Kind     mt.ConnectorKind  `json:"kind"`
		Settings map[string]string `json:"settings"`
		Body     json.RawMessage   `json:"body"`
	}
	if err := json.Unmarshal(eff.BeforeState, &sent); err != nil || sent.Kind == "" {
		return connectors.Call{}, fmt.Errorf("effect %s does not record the call it made", eff.OperationKey)
	}
	return connectors.Call{Kind: sent.Kind, Settings: sent.Settings, Body: sent.Body}, nil
}

func mayDecide(op *tools.Operator, tool *tools.Tool) error {
	if op == nil || !op.HasRole(ReconcilerRole) {
		return fmt.Errorf("%w: %q", ErrNeedsRole, ReconcilerRole)
	}
	if tool.Effect == mt.EffectMoney && tool.Approval != nil && !op.HasRole(tool.Approval.ApproverRole) {
		return fmt.Errorf("%w: %q, the approver role of %s", ErrNeedsRole, tool.Approval.ApproverRole, tool.Name)
	}
	return nil
}

func lookupFailure(err error) string {
	if errors.Is(err, connectors.ErrNotSearchable) {
		return err.Error()
	}
	return "the provider's records could not be searched: " + err.Error()
}

func receiptIDs(rs []connectors.Match) string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.Receipt.ID
	}
	return strings.Join(ids, ", ")
}

// attestationID names a human attestation. Its prefix keeps it from ever
// being read as a provider's ID.
func attestationID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return "att_" + hex.EncodeToString(b)
}

// adoptedObservation is the success the lost answer would have produced:
// the receipt is the provider's own, so the tool's wording may claim it.
func (a *Activities) adoptedObservation(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, found connectors.Result) mt.Observation {
	wording := a.successWording(ctx, tool, in, found.Receipt, found.Payload, fallbackReceiptWording(found.Receipt))
	summary := successSummary(tool, found.Receipt) + "; found in the provider's records after its answer was lost"
	return observation.Success(summary, wording, found.Payload, found.Receipt, source(tool, in))
}

// attestedObservation reports an effect recorded as done on a human's
// word. Nothing the provider issued proves it, so the wording the agent may
// speak claims nothing: it says a person has looked into it and will
// follow up. The summary, for the agent's reasoning and for ops, says
// exactly what is known.
func attestedObservation(tool *tools.Tool, in workflows.ExecuteInput, receipt *mt.Receipt, actor string) mt.Observation {
	return mt.Observation{
		Status:  mt.StatusWarning,
		Code:    mt.CodeHumanAttested,
		Summary: fmt.Sprintf("%s was recorded as done by %s after its outcome was unknown; there is no receipt from the provider", tool.Name, actor),
		Wording: "A member of our team has looked into this and will follow up with you directly.",
		Source:  source(tool, in),
		Receipt: receipt,
		NextActions: &mt.NextActions{
			RootCause:     "The provider's answer was lost; a human, not the provider, confirmed the effect.",
			Remediation:   "Do not call again: the effect is recorded. Do not tell the person it went through; say the team will follow up.",
			StopCondition: "Stop: this operation key is settled.",
		},
	}
}

// notDeliveredObservation reports an effect found not to have happened.
func notDeliveredObservation(tool *tools.Tool, in workflows.ExecuteInput, why string) mt.Observation {
	wording, err := tool.RenderWording(tools.OutcomeFailure, templateData(in, nil, nil))
	if err != nil {
		wording = "I wasn't able to do that."
	}
	return observation.Error(observation.Failure{
		Code:          mt.CodeNotDelivered,
		Summary:       fmt.Sprintf("%s did not happen; nothing was done", tool.Name),
		RootCause:     why,
		Remediation:   "Tell the person it did not go through. If they still want it, call again with a new operation key.",
		StopCondition: "Do not retry with this operation key.",
		Wording:       wording,
	}, source(tool, in))
}

// Searchable reports whether Recheck can settle a held effect of the named
// tool from the provider's records; otherwise only a human can.
func (a *Activities) Searchable(toolName string) bool {
	t, ok := a.cfg.Catalog.Load().Tool(toolName)
	return ok && t.Effect != mt.EffectMoney && a.cfg.Connectors.Searchable(t.Connector.Kind)
}
