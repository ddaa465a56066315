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

func (s *Server) approval(ctx context.Context, id string) (apitype.Approval, *apitype.Refusal) {
	req, err := s.cfg.Store.ApprovalRequestGet(ctx, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return apitype.Approval{}, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no approval request "+id)
	}
	if err != nil {
		s.cfg.Logger.Error("could not read approval", "err", err)
		return apitype.Approval{}, unavailableRefusal()
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
		return outcomeOf(inv.ID, string(inv.State), inv.Observation, nil), nil
	}
	eff, err := s.cfg.Store.EffectGet(ctx, req.OperationKey)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("error reading effect %s: %w", req.OperationKey, err)
	}
	return outcomeOf("", string(eff.Status), eff.Result, eff.Receipt), nil
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

// handleDecide applies an approver's decision. The decision, its events
// and the token are committed by the ledger in one transaction; the signal
// only wakes the waiting workflow, which reads the decision back.
func (s *Server) handleDecide(decision ledger.Decision) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body apitype.DecisionRequest
		if ref := s.decodeJSON(w, r, &body); ref != nil {
			writeRefusal(w, ref)
			return
		}
		id := r.PathValue("id")
		if ref := s.decide(r.Context(), id, operatorFrom(r.Context()), decision, body); ref != nil {
			writeRefusal(w, ref)
			return
		}
		view, ref := s.approval(r.Context(), id)
		if ref != nil {
			writeRefusal(w, ref)
			return
		}
		writeJSON(w, http.StatusOK, view)
	}
}

// decide checks a decision against the gate's rules and records it.
func (s *Server) decide(ctx context.Context, id string, op *tools.Operator, decision ledger.Decision, body apitype.DecisionRequest) *apitype.Refusal {
	req, err := s.cfg.Store.ApprovalRequestGet(ctx, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no approval request "+id)
	}
	if err != nil {
		s.cfg.Logger.Error("could not read approval", "err", err)
		return unavailableRefusal()
	}
	actor := "operator:" + op.ID
	args, hash, err := approval.CheckDecision(req, approval.Decision{Kind: decision, Approver: op, Args: body.Args}, s.schemaOf(ctx, req))
	if err != nil {
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
	wake, err := json.Marshal(workflows.ApprovalDecision{ApprovalID: id})
	if err != nil {
		s.cfg.Logger.Error("could not encode the wake-up signal", "err", err)
		return unavailableRefusal()
	}
	// The wake-up is queued with the decision: if this attempt to
	// signal fails, the outbox delivers it later, before the token
	// could expire unused.
	res, err := s.cfg.Store.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
		ApprovalID: id, Decision: decision, Actor: actor, Reason: body.Reason, TokenTTL: s.cfg.TokenTTL,
		NewArgs: args, NewArgsHash: hash,
		Signal: &ledger.OutboxSignal{
			WorkflowID: workflows.ApprovalWorkflowID(req.OperationKey, req.SessionID),
			SignalName: workflows.SignalApprovalDecided,
			Payload:    wake,
		}})
	if errors.Is(err, ledger.ErrApprovalNotPending) {
		cur, _ := s.cfg.Store.ApprovalRequestGet(ctx, id)
		return admission.BadRequest(http.StatusConflict, mt.CodeApprovalClosed,
			fmt.Sprintf("approval %s is %s (or past its timeout) and can no longer be decided", id, cur.Status))
	}
	if err != nil {
		s.cfg.Logger.Error("could not record decision", "err", err)
		return unavailableRefusal()
	}
	if res.Signal != nil {
		if err := s.cfg.Outbox.Deliver(ctx, *res.Signal); err != nil {
			s.cfg.Logger.Warn("could not wake the waiting workflow yet; the outbox retries", "approval", id, "err", err)
		}
	}
	return nil
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
