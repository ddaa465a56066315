package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

func (s *Server) handleListApprovals(w http.ResponseWriter, r *http.Request) {
	q, ref := pageQuery(r, time.Now(), string(ledger.ApprovalPending), string(ledger.ApprovalApproved), string(ledger.ApprovalRejected),
		string(ledger.ApprovalTimedOut), string(ledger.ApprovalAutoApproved))
	if ref != nil {
		writeRefusal(w, ref)
		return
	}
	p, err := s.cfg.Store.ApprovalRequestPage(r.Context(), q)
	if err != nil {
		writeRefusal(w, s.pageRefusal("approvals", err))
		return
	}
	out := apitype.ApprovalList{Approvals: make([]apitype.Approval, 0, len(p.Items)), Paging: paging(p)}
	for _, a := range p.Items {
		out.Approvals = append(out.Approvals, approvalView(a, nil))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleGetApproval(w http.ResponseWriter, r *http.Request) {
	view, ref := s.approval(r.Context(), r.PathValue("id"))
	if ref != nil {
		writeRefusal(w, ref)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

// approvalRequest reads request id, refusing with 404 when there is none.
func (s *Server) approvalRequest(ctx context.Context, id string) (ledger.ApprovalRequest, *apitype.Refusal) {
	req, err := s.cfg.Store.ApprovalRequestGet(ctx, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return ledger.ApprovalRequest{}, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no approval request "+id)
	}
	if err != nil {
		s.cfg.Logger.Error("could not read approval", "err", err)
		return ledger.ApprovalRequest{}, unavailableRefusal()
	}
	return req, nil
}

func (s *Server) approval(ctx context.Context, id string) (apitype.Approval, *apitype.Refusal) {
	req, ref := s.approvalRequest(ctx, id)
	if ref != nil {
		return apitype.Approval{}, ref
	}
	events, err := s.cfg.Store.ApprovalEventList(ctx, id)
	if err != nil {
		s.cfg.Logger.Error("could not read approval events", "err", err)
		return apitype.Approval{}, unavailableRefusal()
	}
	view := approvalView(req, events)
	if view.Outcome, err = s.approvalOutcome(ctx, req); err != nil {
		s.cfg.Logger.Error("could not read the approval's outcome", "err", err)
		return apitype.Approval{}, unavailableRefusal()
	}
	if req.SessionID != "" {
		sess, err := s.cfg.Store.SessionGet(ctx, req.SessionID)
		switch {
		case err == nil:
			view.Facts = factsView(sess)
		case !errors.Is(err, ledger.ErrNotFound):
			s.cfg.Logger.Error("could not read the approval's session", "err", err)
			return apitype.Approval{}, unavailableRefusal()
		}
	}
	return view, nil
}

// approvalOutcome is what became of a decided request's call: the
// invocation as the ledger has it, or for a compensation, which has no
// invocation, its effect. Nil while the request is pending or before the
// call has left a trace.
func (s *Server) approvalOutcome(ctx context.Context, req ledger.ApprovalRequest) (*apitype.ApprovalOutcome, error) {
	if req.Status == ledger.ApprovalPending {
		return nil, nil
	}
	if req.InvocationID != "" {
		inv, err := s.cfg.Store.InvocationGet(ctx, req.InvocationID)
		if errors.Is(err, ledger.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("error reading invocation %s: %w", req.InvocationID, err)
		}
		return decidedOutcome(req, &inv, nil), nil
	}
	eff, err := s.cfg.Store.EffectGet(ctx, req.OperationKey)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("error reading effect %s: %w", req.OperationKey, err)
	}
	return decidedOutcome(req, nil, &eff), nil
}

// decidedOutcome is approvalOutcome from what was read: the request's
// invocation, or for a compensation its effect, nil where there is none.
func decidedOutcome(req ledger.ApprovalRequest, inv *ledger.Invocation, eff *ledger.Effect) *apitype.ApprovalOutcome {
	switch {
	case req.Status == ledger.ApprovalPending:
		return nil
	case inv != nil:
		return outcomeOf(inv.ID, string(inv.State), inv.Observation, nil)
	case eff != nil:
		return outcomeOf("", string(eff.Status), eff.Result, eff.Receipt)
	}
	return nil
}

// outcomeOf is an outcome in state with what obs told the agent; receipt
// stands in for an observation that carries none.
func outcomeOf(invocationID, state string, obs *mt.Observation, receipt *mt.Receipt) *apitype.ApprovalOutcome {
	out := &apitype.ApprovalOutcome{InvocationID: invocationID, State: state, Receipt: receipt}
	if obs != nil {
		out.Summary, out.Wording = obs.Summary, obs.Wording
		if obs.Receipt != nil {
			out.Receipt = obs.Receipt
		}
	}
	return out
}

// factsView lists a session's facts by name, each with its provenance.
func factsView(sess ledger.Session) []apitype.SessionFact {
	out := make([]apitype.SessionFact, 0, len(sess.Facts))
	for _, name := range slices.Sorted(maps.Keys(sess.Facts)) {
		f, _ := sess.Fact(name)
		out = append(out, apitype.SessionFact{Name: name, Value: f.Value, Provenance: string(f.Provenance)})
	}
	return out
}

// handleDecide applies an approver's decision. The decision, its events,
// the token and the wake-up's delivery are committed by the ledger in one
// transaction, which also reads back what the answer shows; the signal
// only wakes the waiting workflow, which reads the decision back.
func (s *Server) handleDecide(decision ledger.Decision) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body apitype.DecisionRequest
		if ref := s.decodeJSON(w, r, &body); ref != nil {
			writeRefusal(w, ref)
			return
		}
		id := r.PathValue("id")
		view, ref := s.decide(r.Context(), id, operatorFrom(r.Context()), decision, body)
		if ref != nil {
			writeRefusal(w, ref)
			return
		}
		writeJSON(w, http.StatusOK, view)
	}
}

// decide checks a decision against the gate's rules and records it. Only
// a modify reads the request first, for the schema its edit is checked
// against; any other decision is checked against the request as the
// decision's transaction locks it.
func (s *Server) decide(ctx context.Context, id string, op *tools.Operator, decision ledger.Decision, body apitype.DecisionRequest) (apitype.Approval, *apitype.Refusal) {
	actor := "operator:" + op.ID
	d := approval.Decision{Kind: decision, Approver: op, Args: body.Args}
	var args []byte
	var hash string
	if decision == ledger.DecisionModify {
		req, ref := s.approvalRequest(ctx, id)
		if ref != nil {
			return apitype.Approval{}, ref
		}
		var err error
		if args, hash, err = approval.CheckDecision(req, d, s.schemaOf(ctx, req)); err != nil {
			return apitype.Approval{}, s.decisionRefused(ctx, req, actor, decision, err)
		}
	}
	wake, err := json.Marshal(workflows.ApprovalDecision{ApprovalID: id})
	if err != nil {
		s.cfg.Logger.Error("could not encode the wake-up signal", "err", err)
		return apitype.Approval{}, unavailableRefusal()
	}
	// locked is the request as the decision's transaction read it; a
	// refusal is recorded against it once that transaction rolled back.
	var locked ledger.ApprovalRequest
	wakeUp := &ledger.OutboxSignal{SignalName: workflows.SignalApprovalDecided, Payload: wake}
	// The wake-up is sent before the decision commits and queued with it:
	// if the attempt fails, the outbox delivers it later, before the
	// token could expire unused.
	res, err := s.cfg.Store.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
		ApprovalID: id, Decision: decision, Actor: actor, Reason: body.Reason, TokenTTL: s.cfg.TokenTTL,
		NewArgs: args, NewArgsHash: hash,
		Check: func(req ledger.ApprovalRequest) error {
			locked = req
			wakeUp.WorkflowID = workflows.ApprovalWorkflowID(req.OperationKey, req.SessionID)
			if decision == ledger.DecisionModify {
				return nil // checked above, against the tool's schema
			}
			_, _, err := approval.CheckDecision(req, d, nil)
			return err
		},
		Signal: wakeUp,
		Wake: func(ctx context.Context, sig ledger.OutboxSignal) error {
			// The decision holds its request's lock while it waits: a slow
			// frontend is left to the outbox rather than waited out.
			ctx, cancel := context.WithTimeout(ctx, wakeTimeout)
			defer cancel()
			return s.cfg.Outbox.Send(ctx, sig)
		},
		ReadBack: true,
	})
	var de *approval.DecisionError
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return apitype.Approval{}, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no approval request "+id)
	case errors.As(err, &de):
		return apitype.Approval{}, s.decisionRefused(ctx, locked, actor, decision, de)
	case errors.Is(err, ledger.ErrApprovalNotPending):
		cur, _ := s.cfg.Store.ApprovalRequestGet(ctx, id)
		return apitype.Approval{}, admission.BadRequest(http.StatusConflict, mt.CodeApprovalClosed,
			fmt.Sprintf("approval %s is %s (or past its timeout) and can no longer be decided", id, cur.Status))
	case err != nil:
		s.cfg.Logger.Error("could not record decision", "err", err)
		return apitype.Approval{}, unavailableRefusal()
	}
	if res.Signal != nil && res.Signal.DeliveredAt == nil {
		s.cfg.Logger.Warn("could not wake the waiting workflow before the decision committed; trying again", "approval", id, "err", res.WakeErr)
		if err := s.cfg.Outbox.Deliver(ctx, *res.Signal); err != nil {
			s.cfg.Logger.Warn("could not wake the waiting workflow yet; the outbox retries", "approval", id, "err", err)
		}
	}
	view := approvalView(res.Request, res.Events)
	view.Outcome = decidedOutcome(res.Request, res.Invocation, res.Effect)
	if res.Session != nil {
		view.Facts = factsView(*res.Session)
	}
	return view, nil
}

// wakeTimeout bounds the wake-up a decision sends before it commits.
const wakeTimeout = 2 * time.Second

// decisionRefused answers a decision the gate's rules refused, recording
// the refusal on the request when the rule asks for it.
func (s *Server) decisionRefused(ctx context.Context, req ledger.ApprovalRequest, actor string, decision ledger.Decision, err error) *apitype.Refusal {
	var de *approval.DecisionError
	if !errors.As(err, &de) {
		s.cfg.Logger.Error("could not check the decision", "err", err)
		return unavailableRefusal()
	}
	if de.Audit != "" {
		s.logRefusedDecision(ctx, req, actor, decision, de.Audit)
	}
	return decisionRefusal(de)
}

// schemaOf is the argument schema of the request's tool as the catalog
// version its invocation was admitted under has it: an approver's edit is
// checked against the schema the call was admitted with, whatever a reload
// since says. Nil if that version cannot be read.
func (s *Server) schemaOf(ctx context.Context, req ledger.ApprovalRequest) approval.Schema {
	var version string
	if req.InvocationID != "" {
		inv, err := s.cfg.Store.InvocationGet(ctx, req.InvocationID)
		if err != nil {
			return nil
		}
		version = inv.CatalogVersion
	}
	cat, err := s.cfg.Catalog.At(ctx, version)
	if err != nil {
		return nil
	}
	t, ok := cat.Tool(req.Tool)
	if !ok {
		return nil
	}
	return t
}

// decisionRefusal answers a decision the gate's rules refused.
func decisionRefusal(de *approval.DecisionError) *apitype.Refusal {
	switch de.Rule {
	case approval.RefusedNotApprover:
		return admission.BadRequest(http.StatusForbidden, mt.CodeNotApprover, de.Msg)
	case approval.RefusedArgsMissing, approval.RefusedArgsUnexpected:
		return admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, de.Msg)
	default:
		return admission.BadRequest(http.StatusUnprocessableEntity, mt.CodeInvalidArgs, de.Msg)
	}
}

func (s *Server) logRefusedDecision(ctx context.Context, req ledger.ApprovalRequest, actor string, d ledger.Decision, why string) {
	if _, err := s.cfg.Store.ApprovalEventInsert(ctx, approval.RefusedEvent(req, actor, d, why)); err != nil {
		s.cfg.Logger.Error("could not log a refused decision", "approval", req.ID, "err", err)
	}
}

func (s *Server) handleAudit(w http.ResponseWriter, r *http.Request) {
	findings, err := s.cfg.Store.AuditMoneyEffects(r.Context())
	if err != nil {
		s.cfg.Logger.Error("audit scan failed", "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	writeJSON(w, http.StatusOK, AuditReport(findings, time.Now().UTC()))
}

// AuditReport renders audit findings for the API and the scheduled scan.
func AuditReport(findings []ledger.AuditFinding, at time.Time) apitype.AuditReport {
	out := apitype.AuditReport{CheckedAt: at, Clean: len(findings) == 0, Findings: make([]apitype.AuditFinding, 0, len(findings))}
	for _, f := range findings {
		out.Findings = append(out.Findings, apitype.AuditFinding(f))
	}
	return out
}

func approvalView(a ledger.ApprovalRequest, events []ledger.ApprovalEvent) apitype.Approval {
	v := apitype.Approval{
		ID:            a.ID,
		InvocationID:  a.InvocationID,
		OperationKey:  a.OperationKey,
		SessionID:     a.SessionID,
		AgentID:       a.AgentID,
		Tool:          a.Tool,
		Args:          a.Args,
		ArgsHash:      a.ArgsHash,
		ApproverRole:  a.ApproverRole,
		Reason:        a.Reason,
		RiskTags:      a.RiskTags,
		Effect:        string(a.Effect),
		Reversibility: string(a.Reversibility),
		Context:       a.Context,
		Status:        string(a.Status),
		TimeoutAt:     a.TimeoutAt,
		DecidedBy:     a.DecidedBy,
		DecidedAt:     a.DecidedAt,
		CreatedAt:     a.CreatedAt,
	}
	if v.RiskTags == nil {
		v.RiskTags = []string{}
	}
	for _, e := range events {
		v.Events = append(v.Events, apitype.ApprovalEvent{
			Kind: string(e.Kind), Actor: e.Actor, ArgsHashBefore: e.ArgsHashBefore, ArgsHashAfter: e.ArgsHashAfter,
			Detail: e.Detail, At: e.CreatedAt,
		})
	}
	return v
}
