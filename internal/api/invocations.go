package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/maestro-run/maestro/activities"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// retryAfterSeconds is the poll interval suggested to agents for pending
// invocations.
const retryAfterSeconds = 2

func (s *Server) handleInvoke(w http.ResponseWriter, r *http.Request) {
	agent := agentFrom(r.Context())
	var req apitype.InvokeRequest
	if ref := s.decodeJSON(w, r, &req); ref != nil {
		writeRefusal(w, ref)
		return
	}
	if req.Tool == "" {
		writeRefusal(w, admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, `"tool" is required`))
		return
	}
	if len(req.Args) == 0 || string(req.Args) == "null" {
		req.Args = json.RawMessage(`{}`)
	}
	adm, err := s.cfg.Gate.Admit(r.Context(), admission.Request{
		AgentID:      agent.ID,
		SessionID:    req.SessionID,
		Tool:         req.Tool,
		Args:         req.Args,
		OperationKey: req.OperationKey,
		ToolCallID:   req.ToolCallID,

		SessionContext: req.SessionContext,
		Listen:         s.listen(),
	})
	var ref *apitype.Refusal
	if errors.As(err, &ref) {
		writeRefusal(w, ref)
		return
	}
	if err != nil {
		s.cfg.Logger.Error("admission failed", "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	if adm.Forget != nil {
		defer adm.Forget()
	}
	inv := adm.Invocation
	var msg *readMessage
	if !inv.State.Terminal() && (inv.Route != mt.RouteGated || adm.Decided) {
		s.answerBy(w, r, time.Now().Add(s.AnswerTimeout()))
		inv, msg = s.wait(r.Context(), inv, adm.Recorded)
	}
	if !inv.State.Terminal() && !adm.Created {
		// A re-sent key whose workflow is gone must hear how it ended, not
		// "still running" for ever.
		inv, msg = s.finalizeStranded(r.Context(), inv), nil
	}
	s.writeInvocation(r.Context(), w, inv, adm.ApprovalID, msg)
}

// Finalizer finishes an invocation whose workflow ended without finishing
// it; *activities.Activities is one.
type Finalizer interface {
	FinalizeStranded(ctx context.Context, invocationID string) (ledger.Invocation, error)
}

// finalizeStranded returns the invocation final if its workflow no longer
// runs, and as it was otherwise (its workflow still runs, or its effect's
// lease has not run out yet and the sweep will finish it).
func (s *Server) finalizeStranded(ctx context.Context, inv ledger.Invocation) ledger.Invocation {
	if s.cfg.Finalizer == nil || inv.State.Terminal() {
		return inv
	}
	got, err := s.cfg.Finalizer.FinalizeStranded(ctx, inv.ID)
	switch {
	case err == nil:
		return got
	case errors.Is(err, activities.ErrWorkflowRunning), errors.Is(err, activities.ErrLeaseLive):
	default:
		s.cfg.Logger.Warn("could not finish a stranded invocation", "invocation", inv.ID, "err", err)
	}
	return inv
}

// boardQuiet is how long a wait hears only the answer board before it
// also waits on the workflow: long enough for most calls run by this
// process's worker to be heard without asking Temporal at all, short
// enough that an outcome the board cannot tell of (the activity ran in
// another process sharing the task queue, the invocation was finished by
// something else than its execution, a restart) is soon found.
const boardQuiet = time.Second

// listen is the admission hook that registers a new invocation's wait on
// the answer board before its workflow starts, or nil without a board.
func (s *Server) listen() func(string) (<-chan struct{}, func()) {
	if s.cfg.Answers == nil {
		return nil
	}
	return s.cfg.Answers.Wait
}

// wait blocks until the invocation is final or WaitTimeout passes, then
// returns it as the ledger records it: the ledger, not the workflow result,
// is the source of truth. So when the worker runs in this process, the
// answer goes out once the outcome is committed, without waiting for the
// workflow to complete (ADR 8), and the workflow is waited on only when
// the board stays quiet for boardQuiet. recorded is a wait registered on
// the board before the workflow started, if any. A transient error while
// waiting on the workflow is retried until the deadline. The message the
// returned invocation's receipt names is read with it, when it was read.
func (s *Server) wait(ctx context.Context, inv ledger.Invocation, recorded <-chan struct{}) (ledger.Invocation, *readMessage) {
	waitCtx, cancel := context.WithTimeout(ctx, s.cfg.WaitTimeout)
	defer cancel()
	var msg *readMessage
	read := func() (ledger.Invocation, error) {
		got, ms, err := s.cfg.Store.InvocationGetWithMessage(ctx, inv.ID, twilioProvider)
		msg = nil
		if err == nil {
			msg = &readMessage{status: ms, statusRead: true}
		}
		return got, err
	}
	if recorded == nil {
		var forget func()
		recorded, forget = s.cfg.Answers.Wait(inv.ID)
		defer forget()
		// Registered before this read, so an outcome committed in this
		// process is either read here or heard.
		if recorded != nil {
			if got, err := read(); err == nil && (got.State.Terminal() || answered(got)) {
				return got, msg
			}
		}
	}
	until := waitCtx
	if s.composite(inv.Tool) {
		// A composite effect may answer with the parts that went out while
		// its workflow still delivers the rest: the ledger says when.
		var stop context.CancelFunc
		until, stop = s.untilAnswered(until, inv.ID)
		defer stop()
	}
	if recorded != nil {
		quiet := time.NewTimer(boardQuiet)
		select {
		case <-recorded:
		case <-until.Done():
		case <-quiet.C:
		}
		quiet.Stop()
		if got, m, ok := s.heard(recorded); ok {
			return got, m
		}
		var stop context.CancelFunc
		until, stop = cancelledOn(until, recorded)
		defer stop()
	}
	for {
		// A wait already ended (heard, answered or timed out) asks the
		// ledger only.
		err := until.Err()
		if err == nil {
			var res workflows.InvocationResult
			err = s.cfg.Temporal.GetWorkflow(until, inv.WorkflowID, "").Get(until, &res)
		}
		if got, m, ok := s.heard(recorded); ok {
			return got, m
		}
		got, gerr := read()
		if gerr != nil {
			s.cfg.Logger.Error("could not read invocation", "invocation", inv.ID, "err", gerr)
			return inv, nil
		}
		if got.State.Terminal() || answered(got) || err == nil || waitCtx.Err() != nil {
			return got, msg
		}
		if until.Err() != nil {
			// Told of an outcome the ledger does not show as final: the
			// workflow's completion decides.
			until = waitCtx
			continue
		}
		var closed *temporal.WorkflowExecutionError
		if errors.As(err, &closed) {
			// The workflow ended without finishing the invocation; waiting
			// longer cannot change that.
			return s.finalizeStranded(ctx, got), nil
		}
		s.cfg.Logger.Warn("waiting on invocation workflow failed; retrying", "invocation", inv.ID, "err", err)
		select {
		case <-waitCtx.Done():
			return got, msg
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// heard returns the final invocation the answer board told the wait of,
// as the write that recorded it returned it, with what was read with it:
// the answer then needs no read of the ledger.
func (s *Server) heard(recorded <-chan struct{}) (ledger.Invocation, *readMessage, bool) {
	a, ok := s.cfg.Answers.Heard(recorded)
	if !ok || !a.Invocation.State.Terminal() {
		return ledger.Invocation{}, nil, false
	}
	msg := &readMessage{status: a.Message, statusRead: a.MessageRead}
	if a.StateReadsRead {
		msg.stateReads = &a.StateReads
	}
	return a.Invocation, msg, true
}

// cancelledOn returns a context cancelled once ch is closed.
func cancelledOn(ctx context.Context, ch <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// answered reports whether a running invocation already has its answer:
// a composite effect of which some parts went out (ADR 14).
func answered(inv ledger.Invocation) bool {
	return inv.State == mt.InvocationRunning && inv.Observation != nil
}

// composite reports whether a tool's effect comes in parts.
func (s *Server) composite(name string) bool {
	t, ok := s.cfg.Catalog.Load().Tool(name)
	return ok && len(t.Connector.Parts()) > 0
}

// answerPoll is how often a wait on a composite effect reads the ledger.
const answerPoll = 100 * time.Millisecond

// untilAnswered returns a context cancelled once the invocation has an
// answer in the ledger, so a wait on its workflow ends with it.
func (s *Server) untilAnswered(ctx context.Context, id string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		// Read errors are passed over: the wait on the workflow still ends
		// the call, and the next read may succeed.
		_, _ = ledger.AwaitInvocation(ctx, s.cfg.Store, id, answerPoll, func(got ledger.Invocation, err error) (bool, error) {
			return err == nil && answered(got), nil
		})
		cancel()
	}()
	return ctx, cancel
}

func (s *Server) handleGetInvocation(w http.ResponseWriter, r *http.Request) {
	agent := agentFrom(r.Context())
	inv, approvalID, err := s.cfg.Store.InvocationGetWithApproval(r.Context(), r.PathValue("id"))
	if errors.Is(err, ledger.ErrNotFound) || err == nil && inv.AgentID != agent.ID {
		writeRefusal(w, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no invocation "+r.PathValue("id")+" for this agent"))
		return
	}
	if err != nil {
		s.cfg.Logger.Error("could not read invocation", "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	inv = s.finalizeStranded(r.Context(), inv)
	if inv.Route != mt.RouteGated {
		approvalID = ""
	}
	s.writeInvocation(r.Context(), w, inv, approvalID, nil)
}

// writeInvocation answers 200 with the final observation, or 202 with a
// pending one and a Retry-After hint. A final observation comes with what
// the provider reported about its message since, and a follow-up when that
// contradicts it.
//
// msg, when not nil, is the message status read with inv, so it is not
// read again.
func (s *Server) writeInvocation(ctx context.Context, w http.ResponseWriter, inv ledger.Invocation, approvalID string, msg *readMessage) {
	body := apitype.Invocation{
		InvocationID: inv.ID,
		OperationKey: inv.OperationKey,
		ToolCallID:   inv.ToolCallID,
		SessionID:    inv.SessionID,
		Tool:         inv.Tool,
		Route:        inv.Route,
		State:        inv.State,
		ApprovalID:   approvalID,
		CreatedAt:    &inv.CreatedAt,
		UpdatedAt:    &inv.UpdatedAt,
	}
	if inv.State.Terminal() && inv.Observation != nil {
		body.Observation = *inv.Observation
		if ms, ok := s.messageStatus(ctx, inv, msg); ok {
			args, _ := tools.DecodeArgs(inv.Args)
			body.Delivery = deliveryView(ms)
			body.FollowUp = deliveryFailure(inv, ms, args)
		}
		if s.mayOweCallback(inv) {
			body.Callback = s.callbackView(ctx, inv)
		}
		body.StateReads = s.stateReads(ctx, inv, msg)
		writeJSON(w, http.StatusOK, body)
		return
	}
	if ref := s.oweCallback(ctx, inv); ref != nil {
		writeRefusal(w, ref)
		return
	}
	body.Callback = s.callbackView(ctx, inv)
	body.Observation = s.pendingObservation(inv, approvalID)
	if answered(inv) {
		// Parts of a composite effect went out and the rest are still
		// being delivered: the answer names what went out.
		body.Observation = *inv.Observation
	}
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	writeJSON(w, http.StatusAccepted, body)
}

func (s *Server) pendingObservation(inv ledger.Invocation, approvalID string) mt.Observation {
	src := &mt.Source{System: "maestro", Tool: inv.Tool, OperationKey: inv.OperationKey, InvocationID: inv.ID}
	poll := fmt.Sprintf("GET /v1/invocations/%s after %d seconds", inv.ID, retryAfterSeconds)
	if agent, ok := s.cfg.Catalog.Load().Agent(inv.AgentID); ok && agent.Callback != nil {
		poll = "wait for the final observation at your callback URL (or " + poll + ")"
	}
	if inv.State == mt.InvocationAwaitingApproval {
		wording := "I've asked a team member to approve that; I'll let you know once it's decided."
		if tool, ok := s.cfg.Catalog.Load().Tool(inv.Tool); ok {
			args, _ := tools.DecodeArgs(inv.Args)
			if wd, err := tool.RenderWording(tools.OutcomePending, tools.TemplateData{Args: args}); err == nil && wd != "" {
				wording = wd
			}
		}
		return observation.Pending(observation.Failure{
			Code:          mt.CodeAwaitingApproval,
			Summary:       fmt.Sprintf("%s is waiting for approval %s; nothing has been done yet", inv.Tool, approvalID),
			RootCause:     "Money and irreversible calls need a human decision before they run.",
			Remediation:   "Tell the person it is pending approval, then " + poll + ".",
			StopCondition: "Stop polling once the state is final; never say it is done before a receipt arrives.",
			Wording:       wording,
			Payload:       map[string]string{"approval_id": approvalID},
		}, src)
	}
	wording := "I'm still working on that."
	if tool, ok := s.cfg.Catalog.Load().Tool(inv.Tool); ok {
		args, _ := tools.DecodeArgs(inv.Args)
		wording = tools.WithNotice(wording, tool.RenderNotice(tools.TemplateData{Args: args, OperationKey: inv.OperationKey}))
	}
	return observation.Pending(observation.Failure{
		Code:          mt.CodeInProgress,
		Summary:       inv.Tool + " is still running; nothing is confirmed yet",
		RootCause:     "The provider has not answered within the API's wait time.",
		Remediation:   "Tell the person you're still working on it, then " + poll + ".",
		StopCondition: "Stop polling once the state is final; never say it is done before a receipt arrives.",
		Wording:       wording,
	}, src)
}

func unavailableRefusal() *apitype.Refusal {
	r := internalRefusal()
	r.HTTPStatus = http.StatusServiceUnavailable
	return r
}
