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

	"github.com/maestro-run/maestro/admission"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/approval"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/store"
	"github.com/maestro-run/maestro/workflows"
)

func (s *Server) handleListApprovals(w http.ResponseWriter, r *http.Request) {
	status := store.ApprovalStatus(r.URL.Query().Get("status"))
	switch status {
	case "", store.ApprovalPending, store.ApprovalApproved, store.ApprovalRejected, store.ApprovalTimedOut, store.ApprovalAutoApproved:
	default:
		writeRefusal(w, admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest,
			fmt.Sprintf("unknown status %q: use pending, approved, rejected, timed_out or auto_approved", status)))
		return
	}
	reqs, err := s.cfg.Store.ApprovalRequestList(r.Context(), status, 200)
	if err != nil {
		s.cfg.Logger.Error("could not list approvals", "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	out := apitype.ApprovalList{Approvals: make([]apitype.Approval, 0, len(reqs))}
	for _, a := range reqs {
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

func (s *Server) approval(ctx context.Context, id string) (apitype.Approval, *admission.Refusal) {
	req, err := s.cfg.Store.ApprovalRequestGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
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
	if req.SessionID != "" {
		sess, err := s.cfg.Store.SessionGet(ctx, req.SessionID)
		switch {
		case err == nil:
			view.Facts = factsView(sess)
		case !errors.Is(err, store.ErrNotFound):
			s.cfg.Logger.Error("could not read the approval's session", "err", err)
			return apitype.Approval{}, unavailableRefusal()
		}
	}
	return view, nil
}

// factsView lists a session's facts by name, each with its provenance.
func factsView(sess store.Session) []apitype.SessionFact {
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
func (s *Server) handleDecide(decision store.Decision) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		op := operatorFrom(r.Context())
		var body apitype.DecisionRequest
		if ref := s.decodeJSON(w, r, &body); ref != nil {
			writeRefusal(w, ref)
			return
		}
		id := r.PathValue("id")
		req, err := s.cfg.Store.ApprovalRequestGet(r.Context(), id)
		if errors.Is(err, store.ErrNotFound) {
			writeRefusal(w, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no approval request "+id))
			return
		}
		if err != nil {
			s.cfg.Logger.Error("could not read approval", "err", err)
			writeRefusal(w, unavailableRefusal())
			return
		}
		actor := "operator:" + op.ID
		if req.ApproverRole == "" || !op.HasRole(req.ApproverRole) {
			s.logRefusedDecision(r.Context(), req, actor, decision, "operator lacks the approver role "+req.ApproverRole)
			writeRefusal(w, admission.BadRequest(http.StatusForbidden, mt.CodeNotApprover,
				fmt.Sprintf("only an operator with the %q role may decide approval %s; the attempt was logged", req.ApproverRole, id)))
			return
		}
		wake, err := json.Marshal(workflows.ApprovalDecision{ApprovalID: id})
		if err != nil {
			s.cfg.Logger.Error("could not encode the wake-up signal", "err", err)
			writeRefusal(w, unavailableRefusal())
			return
		}
		// The wake-up is queued with the decision: if this attempt to
		// signal fails, the outbox delivers it later, before the token
		// could expire unused.
		p := store.ApprovalDecideParams{ApprovalID: id, Decision: decision, Actor: actor, Reason: body.Reason, TokenTTL: s.cfg.TokenTTL,
			Signal: &store.OutboxSignal{
				WorkflowID: workflows.ApprovalWorkflowID(req.OperationKey, req.SessionID),
				SignalName: workflows.SignalApprovalDecided,
				Payload:    wake,
			}}
		if decision == store.DecisionModify {
			if p.NewArgs, p.NewArgsHash, err = s.modifiedArgs(req, body); err != nil {
				var ref *admission.Refusal
				if errors.As(err, &ref) {
					s.logRefusedDecision(r.Context(), req, actor, decision, ref.Observation.NextActions.RootCause)
					writeRefusal(w, ref)
					return
				}
				writeRefusal(w, admission.BadRequest(http.StatusUnprocessableEntity, mt.CodeInvalidArgs, err.Error()))
				return
			}
		} else if len(body.Args) > 0 {
			writeRefusal(w, admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, `"args" is only accepted by modify`))
			return
		}
		res, err := s.cfg.Store.ApprovalDecide(r.Context(), p)
		if err != nil {
			if errors.Is(err, store.ErrApprovalNotPending) {
				cur, _ := s.cfg.Store.ApprovalRequestGet(r.Context(), id)
				writeRefusal(w, admission.BadRequest(http.StatusConflict, mt.CodeApprovalClosed,
					fmt.Sprintf("approval %s is %s (or past its timeout) and can no longer be decided", id, cur.Status)))
				return
			}
			s.cfg.Logger.Error("could not record decision", "err", err)
			writeRefusal(w, unavailableRefusal())
			return
		}
		if res.Signal != nil {
			if err := s.cfg.Outbox.Deliver(r.Context(), *res.Signal); err != nil {
				s.cfg.Logger.Warn("could not wake the waiting workflow yet; the outbox retries", "approval", id, "err", err)
			}
		}
		view, ref := s.approval(r.Context(), id)
		if ref != nil {
			writeRefusal(w, ref)
			return
		}
		writeJSON(w, http.StatusOK, view)
	}
}

// modifiedArgs validates an approver's edited arguments against the tool's
// schema and freezes them.
func (s *Server) modifiedArgs(req store.ApprovalRequest, body apitype.DecisionRequest) ([]byte, string, error) {
	if len(body.Args) == 0 {
		return nil, "", admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, `modify needs "args": the edited arguments`)
	}
	tool, ok := s.cfg.Catalog.Tool(req.Tool)
	if !ok {
		return nil, "", fmt.Errorf("tool %s is no longer in the catalog", req.Tool)
	}
	if err := tool.ValidateArgs(body.Args); err != nil {
		return nil, "", admission.BadRequest(http.StatusUnprocessableEntity, mt.CodeInvalidArgs, "the edited arguments are invalid: "+err.Error())
	}
	return approval.Canonicalize(body.Args)
}

func (s *Server) logRefusedDecision(ctx context.Context, req store.ApprovalRequest, actor string, d store.Decision, why string) {
	detail, _ := json.Marshal(map[string]string{"decision": string(d), "why": why})
	if _, err := s.cfg.Store.ApprovalEventInsert(ctx, store.ApprovalEvent{
		ApprovalID:     req.ID,
		Kind:           store.ApprovalEventDecisionRefused,
		Actor:          actor,
		ArgsHashBefore: req.ArgsHash,
		Detail:         detail,
	}); err != nil {
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
func AuditReport(findings []store.AuditFinding, at time.Time) apitype.AuditReport {
	out := apitype.AuditReport{CheckedAt: at, Clean: len(findings) == 0, Findings: make([]apitype.AuditFinding, 0, len(findings))}
	for _, f := range findings {
		out.Findings = append(out.Findings, apitype.AuditFinding(f))
	}
	return out
}

func approvalView(a store.ApprovalRequest, events []store.ApprovalEvent) apitype.Approval {
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
