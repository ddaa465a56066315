package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// PostCallAttempt makes one attempt at delivering a work item on one of
// its channels: a call through the normal gate, as the catalog's post-call
// agent, under the attempt's own operation key. It waits for the
// invocation's outcome and says what that outcome proves, so the workflow
// knows whether to wait and try again, move to the next channel, or wait
// for reconciliation.
func (a *Activities) PostCallAttempt(ctx context.Context, in workflows.AttemptInput) (workflows.Attempt, error) {
	at := workflows.Attempt{N: in.N, Channel: in.Channel, Tool: in.Tool, OperationKey: in.OperationKey}
	inv, ref, err := a.admitPostCall(ctx, in.SessionID, in.OperationKey, in.Tool, in.Args)
	if err != nil {
		return at, err
	}
	at.At = time.Now().UTC()
	if ref != nil {
		at.Outcome, at.Summary = workflows.AttemptRefused, ref.Observation.Summary+": "+ref.Observation.NextActions.RootCause
		if ref.HTTPStatus >= http.StatusInternalServerError {
			// maestro itself could not take the call; nothing was done.
			at.Outcome = workflows.AttemptUnavailable
		}
		return at, nil
	}
	at.InvocationID = inv.ID
	inv, err = a.awaitInvocation(ctx, inv.ID)
	if err != nil {
		return at, err
	}
	at.At = time.Now().UTC()
	at.Outcome, at.Summary, at.Receipt = attemptOutcome(inv.State, *inv.Observation)
	if at.Outcome == workflows.AttemptUnknown {
		reason, err := a.resendByPolicy(ctx, at, *inv.Observation)
		if err != nil {
			return at, err
		}
		if reason != "" {
			at.ResolvedBy, at.Resolution = PolicyOnUnknown, reason
		}
	}
	return at, nil
}

// attemptOutcome reads what an invocation's outcome proves about the
// delivery (ADR 9): only a receipt delivers, only "nothing was done
// because the provider could not be reached" is worth the same channel
// again, an unknown outcome is reconciled, and the rest is a definitive
// refusal.
func attemptOutcome(state mt.InvocationState, obs mt.Observation) (workflows.AttemptOutcome, string, *mt.Receipt) {
	switch {
	case state == mt.InvocationSucceeded && obs.Receipt != nil && obs.Receipt.ID != "":
		return workflows.AttemptDelivered, obs.Summary, obs.Receipt
	case state == mt.InvocationNeedsReconciliation:
		return workflows.AttemptUnknown, obs.Summary, nil
	case state == mt.InvocationFailed && obs.Code == mt.CodeProviderUnavailable:
		return workflows.AttemptUnavailable, obs.Summary, nil
	}
	summary := obs.Summary
	if obs.NextActions != nil && obs.NextActions.RootCause != "" {
		summary += ": " + obs.NextActions.RootCause
	}
	return workflows.AttemptRefused, summary, nil
}

// PostCallSettled reads back an attempt held for reconciliation: delivered
// once reconciliation found the effect (the provider's receipt, or a
// human's attestation), unavailable once it found the effect did not
// happen, so the channel may be tried again under a new key, and unknown
// while it is still held.
func (a *Activities) PostCallSettled(ctx context.Context, at workflows.Attempt) (workflows.Attempt, error) {
	eff, err := a.cfg.Store.EffectGet(ctx, at.OperationKey)
	if err != nil {
		return at, retryable(ErrTypeLedger, fmt.Errorf("error reading the held attempt %s: %w", at.OperationKey, err))
	}
	at.At = time.Now().UTC()
	switch eff.Status {
	case mt.EffectSucceeded:
		if eff.Receipt != nil && eff.Receipt.ID != "" {
			at.Outcome, at.Receipt = workflows.AttemptDelivered, eff.Receipt
			at.Summary = "reconciled as delivered (" + eff.Receipt.Provider + " " + eff.Receipt.ID + ")"
		}
	case mt.EffectFailed:
		at.Outcome, at.Summary = workflows.AttemptUnavailable, "reconciled as not delivered: "+eff.Error
	}
	return at, nil
}

// admitPostCall admits one post-call call through the gate. A refusal is
// returned, not an error: it is the gate's definitive answer.
func (a *Activities) admitPostCall(ctx context.Context, sessionID, key, tool string, args json.RawMessage) (ledger.Invocation, *apitype.Refusal, error) {
	pc := a.cfg.Catalog.Load().PostCall()
	if pc == nil || a.cfg.Gate == nil {
		return ledger.Invocation{}, nil, nonRetryable(workflows.ErrTypeInvariant, errors.New("the catalog has no post-call section or no gate is configured"))
	}
	adm, err := a.cfg.Gate.Admit(ctx, admission.Request{
		AgentID:      pc.Agent,
		SessionID:    sessionID,
		Tool:         tool,
		Args:         args,
		OperationKey: key,
	})
	var ref *apitype.Refusal
	if errors.As(err, &ref) {
		return ledger.Invocation{}, ref, nil
	}
	if err != nil {
		return ledger.Invocation{}, nil, retryable(ErrTypeLedger, fmt.Errorf("error admitting post-call item: %w", err))
	}
	return adm.Invocation, nil, nil
}

// awaitInvocation polls the ledger until the invocation is final,
// heartbeating so a lost worker is noticed.
func (a *Activities) awaitInvocation(ctx context.Context, id string) (ledger.Invocation, error) {
	return ledger.AwaitInvocation(ctx, a.cfg.Store, id, 250*time.Millisecond, func(inv ledger.Invocation, err error) (bool, error) {
		if err != nil {
			return true, retryable(ErrTypeLedger, fmt.Errorf("error reading post-call invocation: %w", err))
		}
		if inv.State.Terminal() && inv.Observation != nil {
			return true, nil
		}
		activity.RecordHeartbeat(ctx, inv.State)
		return false, nil
	})
}
