package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/maestro-run/maestro/activities"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

func isHeldKey(key string) bool {
	_, _, ok := workflows.ParsePostCallHeldKey(key)
	return ok
}

// handleRetryReconciliation delivers held post-call work again.
func (s *Server) handleRetryReconciliation(w http.ResponseWriter, r *http.Request) {
	if key := r.PathValue("key"); isHeldSignalKey(key) {
		refuseHeldSignalAction(w, key)
		return
	}
	if !isHeldKey(r.PathValue("key")) {
		writeRefusal(w, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound,
			"only held post-call work (a key ending in /held) is retried; an effect held for reconciliation is resolved or checked"))
		return
	}
	s.actOnHeld(w, r, http.StatusAccepted, func(ctx context.Context, key string, op *tools.Operator) error {
		_, err := s.cfg.Reconciler.RetryHeld(ctx, key, op)
		return err
	})
}

// actOnHeld runs an operator's action on held post-call work and answers
// with the item as it then stands.
func (s *Server) actOnHeld(w http.ResponseWriter, r *http.Request, status int, act func(context.Context, string, *tools.Operator) error) {
	key := r.PathValue("key")
	err := act(r.Context(), key, operatorFrom(r.Context()))
	switch {
	case err == nil:
	case errors.Is(err, ledger.ErrNotFound):
		writeRefusal(w, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no post-call work under "+key))
		return
	case errors.Is(err, activities.ErrNeedsRole):
		writeRefusal(w, admission.BadRequest(http.StatusForbidden, mt.CodeNotApprover, err.Error()))
		return
	case errors.Is(err, ledger.ErrEffectNotHeld):
		writeRefusal(w, admission.BadRequest(http.StatusConflict, mt.CodeNotHeld, fmt.Sprintf("%s is not held: %v", key, err)))
		return
	default:
		s.cfg.Logger.Error("could not act on held post-call work", "key", key, "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	view, ref := s.heldReconciliation(r.Context(), key)
	if ref != nil {
		writeRefusal(w, ref)
		return
	}
	writeJSON(w, status, view)
}

func (s *Server) heldReconciliation(ctx context.Context, key string) (apitype.Reconciliation, *apitype.Refusal) {
	sessionID, itemKey, _ := workflows.ParsePostCallHeldKey(key)
	it, err := s.cfg.Store.PostCallItemGet(ctx, sessionID, itemKey)
	if errors.Is(err, ledger.ErrNotFound) {
		return apitype.Reconciliation{}, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no post-call work under "+key)
	}
	if err != nil {
		s.cfg.Logger.Error("could not read post-call work", "key", key, "err", err)
		return apitype.Reconciliation{}, unavailableRefusal()
	}
	return s.heldView(ctx, it), nil
}

// heldView shows post-call work held for a human with what the caller
// said, where to reach them, and every attempt made.
func (s *Server) heldView(ctx context.Context, it ledger.PostCallItem) apitype.Reconciliation {
	v := apitype.Reconciliation{
		OperationKey: workflows.PostCallHeldKey(it.SessionID, it.Key),
		InvocationID: it.InvocationID,
		Tool:         it.Tool,
		Effect:       string(mt.EffectWrite),
		Status:       string(it.Status),
		Reason:       it.Reason,
		Receipt:      it.Receipt,
		ClaimedAt:    it.CreatedAt,
		UpdatedAt:    it.UpdatedAt,
	}
	if t, ok := s.cfg.Catalog.Load().Tool(it.Tool); ok {
		v.Effect = string(t.Effect)
	}
	h := &apitype.HeldDelivery{SessionID: it.SessionID, ItemKey: it.Key, DeferredID: it.DeferredID, Source: it.Source, Attempts: []apitype.DeliveryAttempt{}}
	var item mt.WorkItem
	if len(it.Item) > 0 && json.Unmarshal(it.Item, &item) == nil {
		h.Urgent = item.Urgent
		v.Request = item.Args
	}
	// The caller's own words are the recorded intent's, when there is one.
	words := item.Args
	if it.DeferredID != "" {
		if d, err := s.cfg.Store.DeferredGet(ctx, it.DeferredID); err == nil {
			words = d.Args
		} else {
			s.cfg.Logger.Warn("could not read the deferred intent of held work", "deferred_id", it.DeferredID, "err", err)
		}
	}
	h.Words, h.CallbackNumber = callerWords(words)
	if h.CallbackNumber == "" {
		if sess, err := s.cfg.Store.SessionGet(ctx, it.SessionID); err == nil {
			h.CallbackNumber = sess.Facts["caller_number"]
		}
	}
	if as := s.attemptViews(it); as != nil {
		h.Attempts = as
	}
	v.Attempts = len(h.Attempts)
	v.Held = h
	return v
}

// callerWords picks the caller's words and callback number out of
// recorded arguments: the message, request or description they gave.
func callerWords(args json.RawMessage) (words, callback string) {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return "", ""
	}
	str := func(k string) string { s, _ := m[k].(string); return strings.TrimSpace(s) }
	for _, k := range []string{"message", "request", "text", "description", "reason"} {
		if words = str(k); words != "" {
			break
		}
	}
	return words, str("callback_number")
}

// attemptViews shows an item's recorded attempts.
func (s *Server) attemptViews(it ledger.PostCallItem) []apitype.DeliveryAttempt {
	var attempts []workflows.Attempt
	if len(it.Attempts) > 0 {
		if err := json.Unmarshal(it.Attempts, &attempts); err != nil {
			s.cfg.Logger.Warn("could not read the attempts of post-call work", "session", it.SessionID, "item", it.Key, "err", err)
		}
	}
	var out []apitype.DeliveryAttempt
	for _, a := range attempts {
		out = append(out, apitype.DeliveryAttempt{
			N: a.N, Channel: a.Channel, Tool: a.Tool, OperationKey: a.OperationKey, InvocationID: a.InvocationID,
			Outcome: string(a.Outcome), Summary: a.Summary, Receipt: a.Receipt, At: a.At,
			ResolvedBy: a.ResolvedBy, Resolution: a.Resolution,
		})
	}
	return out
}
