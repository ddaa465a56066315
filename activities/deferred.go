package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// RecordDeferred records a record-deferred intent for the post-call
// workflow. Nothing is delivered now, and the observation says so: its
// wording is future or neutral tense and it carries no receipt.
func (a *Activities) RecordDeferred(ctx context.Context, in workflows.ExecuteInput) (workflows.InvocationResult, error) {
	tool, err := a.admittedTool(ctx, &in)
	if err != nil {
		return workflows.InvocationResult{}, err
	}
	item, err := a.cfg.Store.DeferredInsert(ctx, ledger.DeferredItem{
		SessionID:    in.SessionID,
		OperationKey: in.OperationKey,
		Tool:         in.Tool,
		Args:         in.Args,
		Status:       ledger.DeferredRecorded,
	})
	if err != nil {
		return workflows.InvocationResult{}, retryable(ErrTypeLedger, fmt.Errorf("error recording deferred item: %w", err))
	}
	payload, err := json.Marshal(map[string]string{"deferred_id": item.ID, "delivery": "after_call", "status": string(item.Status)})
	if err != nil {
		return workflows.InvocationResult{}, fmt.Errorf("error encoding deferred payload: %w", err)
	}
	wording := a.successWording(ctx, tool, in, nil, payload, fallbackDeferredWording)
	obs := observation.Success(
		"Recorded for delivery after the call; nothing has been delivered yet",
		wording, payload, nil, source(tool, in))
	obs.Code = mt.CodeDeferred
	return a.finish(ctx, in, mt.InvocationRecorded, obs)
}
