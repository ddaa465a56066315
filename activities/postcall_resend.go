package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// PolicyOnUnknown is the actor of a reconciliation decision the catalog's
// on_unknown policy made, not a human or a search.
const PolicyOnUnknown = "policy:on_unknown"

// resendByPolicy settles a held post-call attempt by its tool's on_unknown
// policy (ADR 13): when the tool opted in to resending and its provider
// cannot be searched, nobody will ever learn more than a human can guess,
// and for a promised message a loss is worse than a duplicate. The effect
// leaves the reconciliation list with a decision that says so, and the
// chain sends again under its next key. It returns the decision's reason,
// or "" when the attempt stays held: a searchable provider is reconciled
// by search, and a hold-policy tool waits for a human.
func (a *Activities) resendByPolicy(ctx context.Context, at workflows.Attempt, obs mt.Observation) (string, error) {
	t, ok := a.cfg.Catalog.Load().Tool(at.Tool)
	if !ok || !t.Resends() || a.Searchable(at.Tool) {
		return "", nil
	}
	held, err := a.held(ctx, at.OperationKey)
	if errors.Is(err, ledger.ErrEffectNotHeld) {
		// Settled already (a search, a human): the chain reads it back.
		return "", nil
	}
	if err != nil {
		return "", retryable(ErrTypeLedger, fmt.Errorf("error reading the held attempt %s: %w", at.OperationKey, err))
	}
	reason := fmt.Sprintf("%s's provider answered ambiguously and cannot be searched; sent again under on_unknown: resend, so a duplicate is possible", at.Tool)
	obs.Summary = fmt.Sprintf("%s may have happened; sent again by policy, a duplicate is possible", at.Tool)
	_, err = a.settleHeld(ctx, held, ledger.EffectReconcileParams{
		OperationKey: at.OperationKey,
		Status:       mt.EffectFailed, Result: &obs, Error: reason, InvocationState: mt.InvocationFailed,
		Event: ledger.ReconciliationEvent{Kind: ledger.ReconciliationNotDelivered, Actor: PolicyOnUnknown, Reason: reason},
	})
	if errors.Is(err, ledger.ErrEffectNotHeld) {
		return "", nil
	}
	if err != nil {
		return "", retryable(ErrTypeLedger, fmt.Errorf("error settling the held attempt %s by policy: %w", at.OperationKey, err))
	}
	a.cfg.Logger.Warn("post-call attempt resent by policy; a duplicate is possible", "operation_key", at.OperationKey, "tool", at.Tool)
	return reason, nil
}
