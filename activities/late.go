package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// lateReceipt keeps the provider's receipt that came back to an attempt
// after it lost its claim. When the key was held for reconciliation in the
// meantime (the sweeper found the attempt's workflow gone and its lease run
// out), the receipt is this call's own answer: it settles the held effect
// as the lost answer would have, rather than be dropped and leave a human
// to rediscover what the provider already said. Anything else (another
// attempt took the key over, a human decided first, another key already
// holds the receipt) keeps the ledger's outcome.
func (a *Activities) lateReceipt(ctx context.Context, in workflows.ExecuteInput, owner string, res connectors.Result, obs mt.Observation) (workflows.InvocationResult, error) {
	eff, err := a.cfg.Store.EffectGet(ctx, in.OperationKey)
	if err != nil {
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error reading effect after losing its lease: %w", err))
	}
	if eff.Status != mt.EffectNeedsReconciliation || eff.Receipt != nil {
		return a.leaseLost(ctx, in)
	}
	owners, err := a.cfg.Store.EffectListByReceiptID(ctx, res.Receipt.ID)
	if err != nil {
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error checking whom the ledger credits with %s: %w", res.Receipt.ID, err))
	}
	for _, o := range owners {
		if o.OperationKey != in.OperationKey {
			a.cfg.Logger.Error("a late receipt is already credited to another operation key; the effect stays held",
				"operation_key", in.OperationKey, "receipt", res.Receipt.ID, "credited_to", o.OperationKey)
			return a.leaseLost(ctx, in)
		}
	}
	_, err = a.cfg.Store.EffectReconcile(ctx, ledger.EffectReconcileParams{
		OperationKey:    in.OperationKey,
		Status:          mt.EffectSucceeded,
		Receipt:         res.Receipt,
		AfterState:      res.Payload,
		Result:          &obs,
		InvocationState: mt.InvocationSucceeded,
		Event: ledger.ReconciliationEvent{
			Kind: ledger.ReconciliationAdopted, Actor: "reconciler:" + owner, Receipt: res.Receipt,
			Reason: fmt.Sprintf("the attempt that claimed the key came back with the provider's answer (%s) after the effect was held for reconciliation", res.Receipt.ID),
		},
	})
	if errors.Is(err, ledger.ErrEffectNotHeld) {
		return a.leaseLost(ctx, in)
	}
	if err != nil {
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error settling a held effect with its late receipt: %w", err))
	}
	a.cfg.Logger.Warn("held effect settled by its attempt's late receipt", "operation_key", in.OperationKey, "receipt", res.Receipt.ID)
	return outcome(mt.InvocationSucceeded, obs)
}
