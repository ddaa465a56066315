package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/maestro-run/maestro/activities"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Reconciler settles effects held for reconciliation: by a human's
// decision, or by searching the provider again when asked.
// *activities.Activities is one.
type Reconciler interface {
	Resolve(ctx context.Context, d activities.Decision) (ledger.Effect, error)
	Recheck(ctx context.Context, operationKey string, op *tools.Operator) (ledger.Effect, error)
	Searchable(tool string) bool
	// DeliverHeldByHand and RetryHeld act on post-call work held for a
	// human, named by its held key (see workflows.PostCallHeldKey).
	DeliverHeldByHand(ctx context.Context, key string, op *tools.Operator, reason string) (ledger.PostCallItem, error)
	RetryHeld(ctx context.Context, key string, op *tools.Operator) (ledger.PostCallItem, error)
}

// handleListReconciliations lists what ops must look at: post-call work
// and signals held for a human first (a promise the agent made to a caller
// that nothing kept, or a call's end Temporal refused, so that none of its
// post-call work started: a person is waiting on it), then held money, then the
// other held effects, then the sends the agent reported and whose message
// the provider then reported undelivered; oldest first within each. Money
// comes before other held effects because a person may have been paid, or
// not, and only a human settles it.
func (s *Server) handleListReconciliations(w http.ResponseWriter, r *http.Request) {
	q, ref := pageQuery(r, time.Now(), string(ledger.QueueHeldPostCall), string(ledger.QueueHeldSignal), string(ledger.QueueHeldEffect),
		string(ledger.QueueUndelivered))
	if ref != nil {
		writeRefusal(w, ref)
		return
	}
	p, err := s.cfg.Store.ReconciliationPage(r.Context(), q)
	if err != nil {
		writeRefusal(w, s.pageRefusal("the reconciliation queue", err))
		return
	}
	out := apitype.ReconciliationList{Reconciliations: make([]apitype.Reconciliation, 0, len(p.Items)), Paging: paging(p)}
	for _, it := range p.Items {
		v, err := s.queueView(r.Context(), it)
		if errors.Is(err, ledger.ErrNotFound) {
			// Settled between the page and this read: the next page
			// starts after it all the same.
			continue
		}
		if err != nil {
			writeRefusal(w, s.pageRefusal("the reconciliation queue", err))
			return
		}
		out.Reconciliations = append(out.Reconciliations, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// queueView reads one row of the reconciliation queue.
func (s *Server) queueView(ctx context.Context, it ledger.ReconciliationItem) (apitype.Reconciliation, error) {
	switch it.Kind {
	case ledger.QueueHeldPostCall:
		held, err := s.cfg.Store.PostCallItemGet(ctx, it.SessionID, it.ItemKey)
		if err != nil {
			return apitype.Reconciliation{}, err
		}
		return s.heldView(ctx, held), nil
	case ledger.QueueHeldSignal:
		id, _ := ledger.ParseOutboxHeldKey(it.OperationKey)
		sig, err := s.cfg.Store.OutboxGet(ctx, id)
		if err != nil {
			return apitype.Reconciliation{}, err
		}
		return heldSignalView(sig), nil
	case ledger.QueueUndelivered:
		eff, err := s.cfg.Store.EffectGet(ctx, it.OperationKey)
		if err != nil {
			return apitype.Reconciliation{}, err
		}
		ms, err := s.cfg.Store.MessageStatusGet(ctx, twilioProvider, receiptMessageSID(eff.Receipt))
		if err != nil {
			return apitype.Reconciliation{}, err
		}
		return s.undeliveredView(ledger.EffectMessage{Effect: eff, Message: ms}), nil
	default:
		eff, err := s.cfg.Store.EffectGet(ctx, it.OperationKey)
		if err != nil {
			return apitype.Reconciliation{}, err
		}
		return s.reconciliationView(eff, nil), nil
	}
}

// undeliveredView shows a succeeded send whose message never arrived. It
// is not held (nothing is unknown, and nothing may be resent under its
// key); it is listed so ops can see who was told a text went out that did
// not, and reach them another way.
func (s *Server) undeliveredView(em ledger.EffectMessage) apitype.Reconciliation {
	v := s.reconciliationView(em.Effect, nil)
	v.Delivery = deliveryView(em.Message)
	because := ""
	if em.Message.ErrorCode != "" {
		because = fmt.Sprintf(" (Twilio error %s)", em.Message.ErrorCode)
	}
	v.Reason = fmt.Sprintf("the agent was told the message was sent; Twilio then reported %s %s%s", em.Message.MessageID, em.Message.Status, because)
	return v
}

func (s *Server) handleGetReconciliation(w http.ResponseWriter, r *http.Request) {
	read := s.reconciliation
	switch key := r.PathValue("key"); {
	case isHeldKey(key):
		read = s.heldReconciliation
	case isHeldSignalKey(key):
		read = s.heldSignalReconciliation
	}
	view, ref := read(r.Context(), r.PathValue("key"))
	if ref != nil {
		writeRefusal(w, ref)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

func (s *Server) reconciliation(ctx context.Context, key string) (apitype.Reconciliation, *apitype.Refusal) {
	eff, err := s.cfg.Store.EffectGet(ctx, key)
	if errors.Is(err, ledger.ErrNotFound) {
		return apitype.Reconciliation{}, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no effect under operation key "+key)
	}
	if err != nil {
		s.cfg.Logger.Error("could not read effect", "err", err)
		return apitype.Reconciliation{}, unavailableRefusal()
	}
	events, err := s.cfg.Store.ReconciliationEventList(ctx, key)
	if err != nil {
		s.cfg.Logger.Error("could not read reconciliation events", "err", err)
		return apitype.Reconciliation{}, unavailableRefusal()
	}
	v := s.reconciliationView(eff, events)
	if sid := receiptMessageSID(eff.Receipt); sid != "" {
		ms, err := s.cfg.Store.MessageStatusGet(ctx, twilioProvider, sid)
		switch {
		case err == nil:
			v.Delivery = deliveryView(ms)
		case !errors.Is(err, ledger.ErrNotFound):
			s.cfg.Logger.Error("could not read message status", "operation_key", key, "err", err)
		}
	}
	return v, nil
}

// handleResolveReconciliation records a human's decision on a held effect.
func (s *Server) handleResolveReconciliation(w http.ResponseWriter, r *http.Request) {
	var body apitype.ReconciliationDecision
	if ref := s.decodeJSON(w, r, &body); ref != nil {
		writeRefusal(w, ref)
		return
	}
	if body.Outcome != apitype.OutcomeDelivered && body.Outcome != apitype.OutcomeNotDelivered {
		writeRefusal(w, admission.BadRequest(http.StatusUnprocessableEntity, mt.CodeInvalidRequest,
			fmt.Sprintf(`"outcome" must be %q or %q, got %q`, apitype.OutcomeDelivered, apitype.OutcomeNotDelivered, body.Outcome)))
		return
	}
	if body.Reason == "" {
		writeRefusal(w, admission.BadRequest(http.StatusUnprocessableEntity, mt.CodeInvalidRequest,
			`"reason" is required: say what you checked, and where`))
		return
	}
	if key := r.PathValue("key"); isHeldSignalKey(key) {
		refuseHeldSignalAction(w, key)
		return
	}
	if key := r.PathValue("key"); isHeldKey(key) {
		if body.Outcome != apitype.OutcomeDelivered {
			writeRefusal(w, admission.BadRequest(http.StatusUnprocessableEntity, mt.CodeInvalidRequest,
				fmt.Sprintf("held post-call work is settled by delivering it: deliver it by hand and resolve it %q, or POST .../retry", apitype.OutcomeDelivered)))
			return
		}
		s.actOnHeld(w, r, http.StatusOK, func(ctx context.Context, key string, op *tools.Operator) error {
			_, err := s.cfg.Reconciler.DeliverHeldByHand(ctx, key, op, body.Reason)
			return err
		})
		return
	}
	s.settleReconciliation(w, r, func(ctx context.Context, key string, op *tools.Operator) (ledger.Effect, error) {
		return s.cfg.Reconciler.Resolve(ctx, activities.Decision{
			OperationKey: key, Delivered: body.Outcome == apitype.OutcomeDelivered, Operator: op, Reason: body.Reason,
		})
	})
}

// handleCheckReconciliation searches the provider again for a held effect.
func (s *Server) handleCheckReconciliation(w http.ResponseWriter, r *http.Request) {
	if key := r.PathValue("key"); isHeldSignalKey(key) {
		refuseHeldSignalAction(w, key)
		return
	}
	if isHeldKey(r.PathValue("key")) {
		writeRefusal(w, admission.BadRequest(http.StatusConflict, mt.CodeNotHeld,
			"held post-call work has no provider record to search: every attempt is listed with its outcome; retry it or deliver it by hand"))
		return
	}
	s.settleReconciliation(w, r, s.cfg.Reconciler.Recheck)
}

// settleReconciliation runs a decision on the key in the path and answers
// with the effect as it then stands.
func (s *Server) settleReconciliation(w http.ResponseWriter, r *http.Request, decide func(context.Context, string, *tools.Operator) (ledger.Effect, error)) {
	key, op := r.PathValue("key"), operatorFrom(r.Context())
	_, err := decide(r.Context(), key, op)
	switch {
	case err == nil:
	case errors.Is(err, ledger.ErrNotFound):
		writeRefusal(w, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no effect under operation key "+key))
		return
	case errors.Is(err, activities.ErrNeedsRole):
		writeRefusal(w, admission.BadRequest(http.StatusForbidden, mt.CodeNotApprover, err.Error()))
		return
	case errors.Is(err, ledger.ErrEffectNotHeld):
		writeRefusal(w, admission.BadRequest(http.StatusConflict, mt.CodeNotHeld,
			fmt.Sprintf("%s is not held for reconciliation: %v", key, err)))
		return
	case errors.Is(err, activities.ErrUnresolved):
		writeRefusal(w, admission.BadRequest(http.StatusConflict, mt.CodeOutcomeUnknown,
			err.Error()+"; resolve it by hand with a recorded decision"))
		return
	default:
		s.cfg.Logger.Error("could not settle held effect", "operation_key", key, "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	view, ref := s.reconciliation(r.Context(), key)
	if ref != nil {
		writeRefusal(w, ref)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

func (s *Server) reconciliationView(e ledger.Effect, events []ledger.ReconciliationEvent) apitype.Reconciliation {
	v := apitype.Reconciliation{
		OperationKey: e.OperationKey,
		InvocationID: e.InvocationID,
		Tool:         e.Tool,
		Status:       string(e.Status),
		Reason:       e.Error,
		Searchable:   e.Status == mt.EffectNeedsReconciliation && s.cfg.Reconciler.Searchable(e.Tool),
		Request:      e.BeforeState,
		Receipt:      e.Receipt,
		Attempts:     e.Attempts,
		ClaimedAt:    e.CreatedAt,
		UpdatedAt:    e.UpdatedAt,
	}
	if t, ok := s.cfg.Catalog.Load().Tool(e.Tool); ok {
		v.Effect = string(t.Effect)
		if t.Effect == mt.EffectMoney && t.Approval != nil {
			v.ApproverRole = t.Approval.ApproverRole
		}
	}
	for _, ev := range events {
		v.Events = append(v.Events, apitype.ReconciliationEvent{
			Kind: string(ev.Kind), Actor: ev.Actor, Reason: ev.Reason, Receipt: ev.Receipt, At: ev.CreatedAt,
		})
	}
	return v
}
