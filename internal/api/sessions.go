package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	"github.com/maestro-run/maestro/internal/transcriptref"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// caller is whoever acts on a session: its own agent, or an operator.
type caller struct {
	actor    string
	agentID  string // set for agents
	operator bool
	op       *tools.Operator // set for operators
}

// agentOrOps admits the session's agent or any operator.
func (s *Server) agentOrOps(next func(http.ResponseWriter, *http.Request, caller, ledger.Session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.sessionCaller(w, r)
		if !ok {
			return
		}
		id := r.PathValue("id")
		if ref := admission.CheckIdentifier("session_id", id); ref != nil {
			writeRefusal(w, ref)
			return
		}
		sess, err := s.cfg.Store.SessionGet(r.Context(), id)
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			writeRefusal(w, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no session "+id))
			return
		case err != nil:
			s.cfg.Logger.Error("could not read session", "err", err)
			writeRefusal(w, unavailableRefusal())
			return
		case !c.operator && sess.AgentID != c.agentID:
			ref := admission.RefuseSessionForbidden(id)
			s.logRefusal(r, c.agentID, id, ref)
			writeRefusal(w, ref)
			return
		}
		next(w, r, c, sess)
	}
}

// sessionCaller is the operator signed in in process, or the operator or
// agent whose key the request carries, under the throttle. It answers the
// request itself when there is none.
func (s *Server) sessionCaller(w http.ResponseWriter, r *http.Request) (caller, bool) {
	if op, ok := s.inProcessOperator(r); ok {
		return caller{actor: "operator:" + op.ID, operator: true, op: op}, true
	}
	client, refused := s.throttled(w, r)
	if refused {
		return caller{}, false
	}
	cat, key := s.cfg.Catalog.Load(), bearer(r)
	op, isOp := cat.OperatorByKey(key)
	ag, isAgent := cat.AgentByKey(key)
	s.keyChecked(client, "agent or operator key", key, isOp || isAgent)
	switch {
	case isOp:
		return caller{actor: "operator:" + op.ID, operator: true, op: op}, true
	case isAgent:
		return caller{actor: "agent:" + ag.ID, agentID: ag.ID}, true
	}
	writeRefusal(w, admission.BadRequest(http.StatusUnauthorized, mt.CodeUnauthorized,
		"an agent or operator key is required: send Authorization: Bearer <key>"))
	return caller{}, false
}

func (s *Server) handleGetSession(w http.ResponseWriter, r *http.Request, _ caller, sess ledger.Session) {
	view, err := s.sessionView(r.Context(), sess)
	if err != nil {
		s.cfg.Logger.Error("could not read session", "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	writeJSON(w, http.StatusOK, view)
}

// sessionView assembles the session from the ledger, the source of truth.
func (s *Server) sessionView(ctx context.Context, sess ledger.Session) (apitype.Session, error) {
	v := apitype.Session{
		SessionID: sess.ID, AgentID: sess.AgentID, State: sess.State, Facts: sess.Facts, FactProvenance: factProvenance(sess),
		HaltStep: sess.HaltStep, HaltReason: sess.HaltReason, ResolvedBy: sess.ResolvedBy, ResolveReason: sess.ResolveReason,
		Resolution: string(sess.Resolution), RollbackStartedAt: sess.RollbackStartedAt,
		CreatedAt: sess.CreatedAt, EndedAt: sess.EndedAt,
		Calls: []apitype.SessionCall{}, UndoStack: []apitype.UndoEntry{}, Deferred: []apitype.DeferredItem{}, PostCall: []apitype.PostCallItem{},
	}
	if err := s.addCalls(ctx, &v); err != nil {
		return v, err
	}
	if err := s.addUndoStack(ctx, &v); err != nil {
		return v, err
	}
	// A rollback waiting for a human's approval of a compensation shows as
	// awaiting_approval, which says more.
	if v.State == mt.SessionActive && sess.RollbackStartedAt != nil {
		v.State = mt.SessionRollingBack
	}
	deferred, err := s.cfg.Store.DeferredListBySession(ctx, sess.ID)
	if err != nil {
		return v, err
	}
	for _, d := range deferred {
		v.Deferred = append(v.Deferred, apitype.DeferredItem{ID: d.ID, Tool: d.Tool, Args: d.Args, Status: string(d.Status), Receipt: d.Receipt, Reason: d.Reason})
	}
	if sess.State == mt.SessionEnded {
		v.PostCallStatus = s.postCallStatus(ctx, sess.ID)
	}
	items, err := s.cfg.Store.PostCallItemList(ctx, sess.ID)
	if err != nil {
		return v, err
	}
	for _, it := range items {
		v.PostCall = append(v.PostCall, apitype.PostCallItem{Key: it.Key, Tool: it.Tool, Source: it.Source, OperationKey: it.OperationKey,
			InvocationID: it.InvocationID, Status: string(it.Status), Receipt: it.Receipt, Reason: it.Reason,
			Attempts: s.attemptViews(it)})
	}
	return v, nil
}

// addCalls adds the session's calls to v, each with its text's delivery
// status; a call awaiting approval makes an active session awaiting_approval.
func (s *Server) addCalls(ctx context.Context, v *apitype.Session) error {
	invs, err := s.cfg.Store.InvocationListBySession(ctx, v.SessionID)
	if err != nil {
		return err
	}
	messages, err := s.cfg.Store.MessageStatusListBySession(ctx, v.SessionID)
	if err != nil {
		return err
	}
	reads, err := s.sessionStateReads(ctx, v.SessionID)
	if err != nil {
		return err
	}
	byKey := make(map[string]ledger.MessageStatus, len(messages))
	for _, em := range messages {
		byKey[em.Effect.OperationKey] = em.Message
	}
	for _, inv := range invs {
		c := apitype.SessionCall{InvocationID: inv.ID, OperationKey: inv.OperationKey, Tool: inv.Tool, Route: inv.Route, State: inv.State,
			StateReads: reads[inv.OperationKey]}
		if inv.Observation != nil {
			c.Summary, c.Wording, c.Receipt = inv.Observation.Summary, inv.Observation.Wording, inv.Observation.Receipt
		}
		if ms, ok := byKey[inv.OperationKey]; ok && inv.State == mt.InvocationSucceeded {
			c.Delivery = deliveryView(ms)
			args, _ := tools.DecodeArgs(inv.Args)
			if f := deliveryFailure(inv, ms, args); f != nil {
				c.FollowUp = f.Summary
			}
		}
		if inv.State == mt.InvocationAwaitingApproval && v.State == mt.SessionActive {
			v.State = mt.SessionAwaitingApproval
		}
		v.Calls = append(v.Calls, c)
	}
	return nil
}

// addUndoStack adds the session's undo entries to v; a pending money
// compensation awaiting approval makes an active session awaiting_approval.
func (s *Server) addUndoStack(ctx context.Context, v *apitype.Session) error {
	undo, err := s.cfg.Store.UndoListBySession(ctx, v.SessionID)
	if err != nil {
		return err
	}
	for _, u := range undo {
		entry := apitype.UndoEntry{UndoID: u.ID, Seq: u.Seq, OperationKey: u.OperationKey,
			Tool: u.CompensationTool, Version: u.CompensationVersion, Snapshot: u.ArgsSnapshot, Status: string(u.Status), Detail: u.Detail}
		if u.Status == ledger.UndoCompensated {
			if entry.Receipt, err = s.compensationReceipt(ctx, u.ID); err != nil {
				return err
			}
		}
		v.UndoStack = append(v.UndoStack, entry)
		if v.State == mt.SessionActive && u.Status == ledger.UndoPending {
			// A money compensation waits for a manager like any money call.
			waiting, err := s.compensationAwaitsApproval(ctx, u.ID)
			if err != nil {
				return err
			}
			if waiting {
				v.State = mt.SessionAwaitingApproval
			}
		}
	}
	return nil
}

// handleRollback runs the saga through the session workflow's rollback
// update and answers with each step, in the LIFO order it ran.
func (s *Server) handleRollback(w http.ResponseWriter, r *http.Request, c caller, sess ledger.Session) {
	var body apitype.RollbackRequest
	if ref := s.decodeOptionalJSON(w, r, &body); ref != nil {
		writeRefusal(w, ref)
		return
	}
	var res workflows.RollbackResult
	if ref := s.update(r.Context(), sess, workflows.UpdateRollback, workflows.RollbackRequest{Actor: c.actor, Reason: body.Reason}, &res); ref != nil {
		writeRefusal(w, ref)
		return
	}
	out := apitype.RollbackResult{Steps: []apitype.UndoOutcome{}, Halted: res.Halted, FailedStep: res.FailedStep}
	for _, st := range res.Steps {
		out.Steps = append(out.Steps, apitype.UndoOutcome{UndoID: st.UndoID, Tool: st.Tool, OperationKey: st.OperationKey,
			Status: st.Status, Summary: st.Summary, Receipt: st.Receipt})
	}
	writeJSON(w, http.StatusOK, out)
}

// handleResolve clears a halt; only operators may, and only with a reason.
func (s *Server) handleResolve(w http.ResponseWriter, r *http.Request, c caller, sess ledger.Session) {
	if !c.operator {
		writeRefusal(w, admission.BadRequest(http.StatusForbidden, mt.CodeNotApprover, "only an operator may resolve a halted session"))
		return
	}
	var body apitype.ResolveRequest
	if ref := s.decodeJSON(w, r, &body); ref != nil {
		writeRefusal(w, ref)
		return
	}
	if ref := s.update(r.Context(), sess, workflows.UpdateResolve, workflows.ResolveRequest{Actor: c.actor, Reason: body.Reason,
		HaltedInLedger: sess.State == mt.SessionHalted, Retry: body.Retry}, nil); ref != nil {
		writeRefusal(w, ref)
		return
	}
	got, err := s.cfg.Store.SessionGet(r.Context(), sess.ID)
	if err != nil {
		writeRefusal(w, unavailableRefusal())
		return
	}
	s.handleGetSession(w, r, c, got)
}

// maxFactBytes bounds a fact's value: facts are phone numbers and IDs.
const maxFactBytes = 512

// handleSetFact records a fact an operator vouches for, under their name.
// Unlike what an agent states in session_context, an auto-approval rule
// may rest on it, but only while that operator holds the authority the
// rule grants (see approval.Policy.Vouches).
func (s *Server) handleSetFact(w http.ResponseWriter, r *http.Request, c caller, sess ledger.Session) {
	if !c.operator {
		writeRefusal(w, admission.BadRequest(http.StatusForbidden, mt.CodeNotApprover,
			"only an operator may vouch for a session fact; agents state facts in the first call's session_context"))
		return
	}
	if ref := s.checkPermission(r, c.op, tools.PermVouchFacts); ref != nil {
		writeRefusal(w, ref)
		return
	}
	vouched, err := mt.OperatorVouched(c.op.ID)
	if err != nil {
		// The catalog admits operator IDs the provenance cannot carry.
		writeRefusal(w, admission.BadRequest(http.StatusUnprocessableEntity, mt.CodeInvalidRequest, "this operator cannot vouch: "+err.Error()))
		return
	}
	var body apitype.FactRequest
	if ref := s.decodeJSON(w, r, &body); ref != nil {
		writeRefusal(w, ref)
		return
	}
	name := r.PathValue("name")
	switch {
	case !slices.Contains(s.declaredFacts(), name):
		writeRefusal(w, admission.BadRequest(http.StatusUnprocessableEntity, mt.CodeInvalidRequest,
			fmt.Sprintf("unknown session fact %q: the catalog's session_facts declares %s", name, strings.Join(s.declaredFacts(), ", "))))
		return
	case body.Value == "" || len(body.Value) > maxFactBytes:
		writeRefusal(w, admission.BadRequest(http.StatusUnprocessableEntity, mt.CodeInvalidRequest,
			fmt.Sprintf("value is required, at most %d bytes", maxFactBytes)))
		return
	case sess.State == mt.SessionEnded:
		writeRefusal(w, admission.BadRequest(http.StatusConflict, mt.CodeSessionEnded, "session "+sess.ID+" has ended"))
		return
	}
	got, err := s.cfg.Store.SessionFactSet(r.Context(), sess.ID, name, mt.Fact{Value: body.Value, Provenance: vouched})
	if err != nil {
		s.cfg.Logger.Error("could not set a session fact", "session", sess.ID, "fact", name, "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	s.cfg.Logger.Info("session fact vouched for", "session", sess.ID, "fact", name, "by", c.actor)
	s.handleGetSession(w, r, c, got)
}

func (s *Server) declaredFacts() []string {
	var names []string
	for _, f := range s.cfg.Catalog.Load().SessionFacts() {
		names = append(names, f.Name)
	}
	return names
}

// factProvenance names each fact's source, agent-declared where none was
// recorded.
func factProvenance(sess ledger.Session) map[string]string {
	if len(sess.Facts) == 0 {
		return nil
	}
	out := make(map[string]string, len(sess.Facts))
	for name := range sess.Facts {
		f, _ := sess.Fact(name)
		out[name] = string(f.Provenance)
	}
	return out
}

// handleEnd delivers the call-ended signal once. The ledger decides which
// request ended the call, so a repeated end sends nothing.
func (s *Server) handleEnd(w http.ResponseWriter, r *http.Request, c caller, sess ledger.Session) {
	var body apitype.EndRequest
	if ref := s.decodeOptionalJSON(w, r, &body); ref != nil {
		writeRefusal(w, ref)
		return
	}
	if body.TranscriptRef != "" {
		// Refused before the call is ended: the agent can still end it
		// with an allowed reference or the transcript inline.
		if err := s.cfg.Transcripts.Check(body.TranscriptRef); err != nil {
			ref := transcriptRefused(err)
			s.logRefusal(r, c.agentID, sess.ID, ref)
			writeRefusal(w, ref)
			return
		}
	}
	var transcript mt.Transcript
	if body.Transcript != nil {
		transcript = *body.Transcript
	}
	if ref := s.ensureSessionWorkflow(r.Context(), nil, sess); ref != nil {
		writeRefusal(w, ref)
		return
	}
	first, err := s.endSession(r.Context(), sess.ID, transcript, body.TranscriptRef)
	if err != nil {
		s.cfg.Logger.Error("could not end session", "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	writeJSON(w, http.StatusAccepted, apitype.EndResult{SessionID: sess.ID, Ended: first, PostCallWorkflowID: workflows.PostCallWorkflowID(sess.ID)})
}

// endSession ends the session in the ledger, keeping its transcript
// there, and queues the call-ended signal in the same transaction: the
// first end is owed to the session until Temporal accepts it, so a signal
// lost here still starts the post-call workflow. Only the request that
// ended the call signals. The signal carries no transcript, which the
// post-call judge reads from the ledger: a transcript the door admits may
// be larger than Temporal accepts in a payload.
func (s *Server) endSession(ctx context.Context, sessionID string, transcript mt.Transcript, transcriptRef string) (first bool, err error) {
	raw, err := json.Marshal(transcript)
	if err != nil {
		return false, fmt.Errorf("error encoding the transcript: %w", err)
	}
	signal, err := json.Marshal(workflows.CallEnded{TranscriptRef: transcriptRef})
	if err != nil {
		return false, fmt.Errorf("error encoding call-ended: %w", err)
	}
	_, first, queued, err := s.cfg.Store.SessionEndSignalled(ctx, sessionID, raw, ledger.OutboxSignal{
		WorkflowID: workflows.SessionWorkflowID(sessionID), SignalName: workflows.SignalCallEnded, Payload: signal,
	})
	if err != nil {
		return false, err
	}
	if first {
		if err := s.cfg.Outbox.Deliver(ctx, queued); err != nil {
			s.cfg.Logger.Warn("could not signal call-ended yet; the outbox retries", "session", sessionID, "err", err)
		}
	}
	return first, nil
}

// update sends an update to the session workflow and waits for its result.
// The workflow's refusal (halted, ended, not halted) is a 409; Temporal
// not answering in time is a 503, so the caller asks again, and a repeated
// rollback joins the one under way.
func (s *Server) update(ctx context.Context, sess ledger.Session, name string, arg, out any) *apitype.Refusal {
	err := s.updateOnce(ctx, sess.ID, name, arg, out)
	// The session's first call started its workflow, but a busy cluster
	// can answer "not found" for a moment after that start. A session the
	// ledger has not ended is asked again, for a bounded time.
	for wait, waited := 50*time.Millisecond, time.Duration(0); isNotFound(err) && sess.EndedAt == nil && waited < updateNotFoundPatience; wait = min(2*wait, time.Second) {
		select {
		case <-ctx.Done():
			return admission.BadRequest(http.StatusConflict, mt.CodeInvalidRequest, fmt.Sprintf("%s refused: %v", name, ctx.Err()))
		case <-time.After(wait):
		}
		waited += wait
		err = s.updateOnce(ctx, sess.ID, name, arg, out)
	}
	switch {
	case err == nil:
		return nil
	case isNotFound(err):
		return admission.BadRequest(http.StatusConflict, mt.CodeSessionEnded, "session "+sess.ID+" is no longer running")
	case refusedByWorkflow(err):
		return admission.BadRequest(http.StatusConflict, mt.CodeInvalidRequest, fmt.Sprintf("%s refused: %v", name, err))
	default:
		s.cfg.Logger.Warn("session update not answered", "session", sess.ID, "update", name, "err", err)
		return unavailableRefusal()
	}
}

// refusedByWorkflow reports whether the session workflow itself refused
// or failed the update, as opposed to Temporal or the request giving up.
func refusedByWorkflow(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app)
}

// updateNotFoundPatience bounds how long an update waits for a session
// workflow the ledger says is running to become visible.
const updateNotFoundPatience = 10 * time.Second

func (s *Server) updateOnce(ctx context.Context, sessionID, name string, arg, out any) error {
	h, err := s.cfg.Temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflows.SessionWorkflowID(sessionID),
		UpdateName:   name,
		Args:         []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return h.Get(ctx, out)
}

func isNotFound(err error) bool {
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound)
}

// decodeOptionalJSON accepts an empty body as {}.
func (s *Server) decodeOptionalJSON(w http.ResponseWriter, r *http.Request, v any) *apitype.Refusal {
	if r.ContentLength == 0 {
		return nil
	}
	return s.decodeJSON(w, r, v)
}

// postCallStatus reports the post-call workflow's progress.
func (s *Server) postCallStatus(ctx context.Context, sessionID string) string {
	desc, err := s.cfg.Temporal.DescribeWorkflowExecution(ctx, workflows.PostCallWorkflowID(sessionID), "")
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		return "not_started"
	case err != nil:
		return "unknown"
	}
	switch desc.GetWorkflowExecutionInfo().GetStatus() {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return "running"
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "completed"
	default:
		return "failed"
	}
}

// transcriptRefused is the 422 for a transcript_ref the fetch policy
// refuses; the summary and the payload name the rule.
func transcriptRefused(err error) *apitype.Refusal {
	rule, detail := transcriptref.RuleMalformed, err.Error()
	var ref *transcriptref.RefusedError
	if errors.As(err, &ref) {
		rule, detail = ref.Rule, ref.Detail
	}
	return &apitype.Refusal{HTTPStatus: http.StatusUnprocessableEntity, Observation: observation.Error(observation.Failure{
		Code:          mt.CodeTranscriptRefused,
		Summary:       fmt.Sprintf("transcript_ref refused by rule %s; the call was not ended", rule),
		RootCause:     detail,
		Remediation:   "End the call again with the transcript inline, or with a transcript_ref over https on a host maestro is configured to fetch from.",
		StopCondition: "Do not retry with the same transcript_ref.",
		Payload:       map[string]string{"rule": string(rule)},
	}, &mt.Source{System: "maestro"})}
}

// compensationReceipt is the provider's proof of an entry's compensation;
// nil for one an operator closed by hand, which ran nothing.
func (s *Server) compensationReceipt(ctx context.Context, undoID string) (*mt.Receipt, error) {
	eff, err := s.cfg.Store.EffectGet(ctx, workflows.CompensationOperationKey(undoID))
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("error reading the compensation of %s: %w", undoID, err)
	}
	return eff.Receipt, nil
}

// compensationAwaitsApproval reports whether the undo entry's compensation
// has an approval request still waiting for a human.
func (s *Server) compensationAwaitsApproval(ctx context.Context, undoID string) (bool, error) {
	req, err := s.cfg.Store.ApprovalRequestGetByKey(ctx, workflows.CompensationOperationKey(undoID))
	if errors.Is(err, ledger.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("error reading the approval of compensation %s: %w", undoID, err)
	}
	return req.Status == ledger.ApprovalPending, nil
}
