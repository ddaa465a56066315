package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

func isHeldSignalKey(key string) bool {
	_, ok := ledger.ParseOutboxHeldKey(key)
	return ok
}

// heldSignalReconciliation reads a held signal by its key.
func (s *Server) heldSignalReconciliation(ctx context.Context, key string) (apitype.Reconciliation, *apitype.Refusal) {
	id, _ := ledger.ParseOutboxHeldKey(key)
	sig, err := s.cfg.Store.OutboxGet(ctx, id)
	if errors.Is(err, ledger.ErrNotFound) || (err == nil && sig.HeldAt == nil) {
		return apitype.Reconciliation{}, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no held signal under "+key)
	}
	if err != nil {
		s.cfg.Logger.Error("could not read a held signal", "key", key, "err", err)
		return apitype.Reconciliation{}, unavailableRefusal()
	}
	return heldSignalView(sig), nil
}

// heldSignalView shows a signal Temporal refused as invalid, with
// Temporal's answer as the reason. Nothing retries it: what it owed is
// done by hand.
func heldSignalView(sig ledger.OutboxSignal) apitype.Reconciliation {
	v := apitype.Reconciliation{
		OperationKey: ledger.OutboxHeldKey(sig.ID),
		Tool:         sig.SignalName,
		Effect:       string(mt.EffectWrite),
		Status:       "held",
		Reason:       sig.LastError,
		Attempts:     sig.Attempts,
		ClaimedAt:    sig.CreatedAt,
		UpdatedAt:    sig.CreatedAt,
		HeldSignal:   &apitype.HeldSignal{WorkflowID: sig.WorkflowID, SignalName: sig.SignalName, PayloadBytes: len(sig.Payload)},
	}
	if sig.HeldAt != nil {
		v.UpdatedAt = *sig.HeldAt
	}
	if id, ok := workflows.ParseSessionWorkflowID(sig.WorkflowID); ok && sig.SignalName == workflows.SignalCallEnded {
		v.HeldSignal.SessionID = id
	}
	return v
}

// refuseHeldSignalAction answers a decision, check or retry on a held
// signal: none applies, as nothing was sent to a provider and Temporal
// would refuse the signal again.
func refuseHeldSignalAction(w http.ResponseWriter, key string) {
	writeRefusal(w, admission.BadRequest(http.StatusConflict, mt.CodeNotHeld,
		key+" is a signal Temporal refused as invalid: no decision, check or retry applies; do by hand what it owed (for call-ended, the call's post-call work)"))
}
