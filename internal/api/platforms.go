package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	"github.com/maestro-run/maestro/internal/platform"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// transcriptMaxBodyBytes caps a body that may carry a call's whole
// transcript: a platform's request (end-of-call events carry the
// transcript and call object, far more than a tool call) and POST
// /v1/sessions/{id}/end. A larger body is answered 413 before anything
// runs. The transcript is kept in the ledger and never sent whole through
// Temporal, so this cap is not bound by Temporal's payload limit.
const transcriptMaxBodyBytes = 4 << 20

const platformPrefix = "/v1/platforms/"

// bodyLimit is the largest body a route takes.
func (s *Server) bodyLimit(r *http.Request) int64 {
	if strings.HasPrefix(r.URL.Path, platformPrefix) || isSessionEnd(r) {
		return max(s.cfg.MaxBodyBytes, transcriptMaxBodyBytes)
	}
	if strings.HasPrefix(r.URL.Path, codecPrefix) {
		return max(s.cfg.MaxBodyBytes, codecMaxBodyBytes)
	}
	return s.cfg.MaxBodyBytes
}

// isSessionEnd reports whether r ends a session: POST
// /v1/sessions/{id}/end, whose body may carry the transcript inline.
func isSessionEnd(r *http.Request) bool {
	id, ok := strings.CutPrefix(r.URL.Path, "/v1/sessions/")
	return r.Method == http.MethodPost && ok && strings.HasSuffix(id, "/end") && strings.Count(id, "/") == 1
}

func (s *Server) platformRoutes() {
	s.mux.HandleFunc("POST /v1/platforms/vapi/{agent}", s.handleVapi)
	s.mux.HandleFunc("POST /v1/platforms/elevenlabs/{agent}/tools/{tool}", s.handleElevenLabsTool)
	s.mux.HandleFunc("POST /v1/platforms/elevenlabs/{agent}/post-call", s.handleElevenLabsPostCall)
	s.mux.HandleFunc("POST /v1/platforms/retell/{agent}/functions", s.handleRetellFunction)
	s.mux.HandleFunc("POST /v1/platforms/retell/{agent}/webhook", s.handleRetellWebhook)
	s.mux.HandleFunc("GET /v1/platforms/{platform}/agents/{agent}/tools", s.handlePlatformExport)
}

// platformRequest is a platform's request whose agent is known and whose
// body was read, not yet verified.
type platformRequest struct {
	agent  *tools.Agent
	secret []byte
	body   []byte
	start  time.Time
}

// readPlatform finds the agent the path names, configured for the
// platform, and reads the raw body the signature covers. It answers the
// request itself when it cannot go on.
func (s *Server) readPlatform(w http.ResponseWriter, r *http.Request, kind tools.PlatformKind) (platformRequest, bool) {
	pr := platformRequest{start: time.Now()}
	id := r.PathValue("agent")
	agent, ok := s.cfg.Catalog.Load().Agent(id)
	if !ok || agent.Platform == nil || agent.Platform.Kind != kind {
		writeRefusal(w, platformRefusal(http.StatusNotFound, mt.CodeNotFound, fmt.Sprintf("no agent %q configured for %s", id, kind),
			"Use the URL starter platforms export prints for the agent."))
		return pr, false
	}
	pr.agent, pr.secret = agent, s.cfg.PlatformSecrets[agent.ID]
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.bodyLimit(r)))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		s.drainBody(w, r)
		writeRefusal(w, tooLargeRefusal(tooBig.Limit))
		return pr, false
	case err != nil:
		writeRefusal(w, platformRefusal(http.StatusBadRequest, mt.CodeInvalidRequest, "error reading the request body: "+err.Error(), "Send the request again."))
		return pr, false
	}
	pr.body = body
	return pr, true
}

// verified checks the outcome of a signature check and, for a signed
// request, that its body is JSON the core API would take and that no API
// process sharing the ledger accepted the signature before. A refused
// signature is answered 401 and logged, and runs nothing; a body maestro
// cannot read is answered 415 or 400 before the signature is claimed; a
// request whose replay check failed is answered 503, also running
// nothing, as the failure says nothing against the sender.
func (s *Server) verified(w http.ResponseWriter, r *http.Request, pr platformRequest, sig platform.Signed, err error) bool {
	if len(pr.secret) == 0 {
		err = errors.New("the platform secret is not configured")
	}
	if err == nil {
		if ref := s.platformBodyRefusal(w, r, pr.body); ref != nil {
			s.refuseAtDoor(w, pr, ref)
			return false
		}
		first, cerr := s.firstUse(r, sig)
		switch {
		case cerr != nil:
			s.cfg.Logger.Error("could not check a platform signature for replay", "platform", pr.agent.Platform.Kind, "agent", pr.agent.ID, "err", cerr)
			writeRefusal(w, unavailableRefusal())
			return false
		case !first:
			err = platform.ErrReplayed
		}
	}
	if err == nil {
		return true
	}
	ref := platformRefusal(http.StatusUnauthorized, mt.CodeUnauthorized, fmt.Sprintf("%s request refused: %v", pr.agent.Platform.Kind, err),
		"Check the platform's secret matches $"+pr.agent.Platform.SecretEnv+" and the server's clock.")
	s.logRefusal(r, pr.agent.ID, "", ref)
	s.cfg.Logger.Warn("platform request refused", "platform", pr.agent.Platform.Kind, "agent", pr.agent.ID, "reason", err.Error())
	writeRefusal(w, ref)
	return false
}

// toolDeadline is when a tool call must stop waiting so its answer reaches
// the platform within the agent's budget: the budget less a margin for the
// trip back. The answer may be written until the platform stops waiting
// (AnswerWithin), whatever the server's write timeout.
func (s *Server) toolDeadline(w http.ResponseWriter, r *http.Request, pr platformRequest) time.Time {
	s.answerBy(w, r, pr.start.Add(pr.agent.Platform.AnswerWithin()))
	budget := pr.agent.Platform.AnswerBudget
	return pr.start.Add(budget - min(2*time.Second, budget/5))
}

// platformInvoke runs one tool call a platform made and answers it within
// the deadline: the outcome if it is final by then, the pending wording
// otherwise. It never fails: a refusal or an internal error is an answer
// the model reads.
func (s *Server) platformInvoke(ctx context.Context, r *http.Request, agent *tools.Agent, call platform.Call, tc platform.ToolCall, deadline time.Time) apitype.PlatformAnswer {
	if ref := checkPlatformIDs(agent.Platform.Kind, call, &tc); ref != nil {
		s.logRefusal(r, agent.ID, "", ref)
		return refusalAnswer(ref)
	}
	if !agent.Platform.Exposes(tc.Name) {
		ref := platformRefusal(http.StatusForbidden, mt.CodeToolNotAllowed,
			fmt.Sprintf("tool %q is not available to this agent", tc.Name), "Tell the caller you cannot do that here, and offer what you can do.")
		s.logRefusal(r, agent.ID, call.ID, ref)
		return refusalAnswer(ref)
	}
	if ref := s.recordSignedFacts(ctx, r, agent, call, agent.MaxLiveSessions); ref != nil {
		return refusalAnswer(ref)
	}
	// No operation key: admission derives it from the session, the tool
	// and the canonical arguments, so a barge-in's re-fired call under a
	// new tool-call ID names the same effect. No session context either:
	// what the model fills in is never a fact.
	adm, err := s.cfg.Gate.Admit(ctx, admission.Request{
		AgentID: agent.ID, SessionID: call.ID, Tool: tc.Name, Args: tc.Args, ToolCallID: tc.ID,
	})
	var ref *apitype.Refusal
	if errors.As(err, &ref) {
		return refusalAnswer(ref)
	}
	if err != nil {
		s.cfg.Logger.Error("admission failed", "err", err, "platform", agent.Platform.Kind)
		return refusalAnswer(unavailableRefusal())
	}
	inv := adm.Invocation
	// A call waiting for a human is answered at once, so the model can say
	// so, unless the platform runs the tool async: then the conversation
	// goes on, and a decision within the budget is worth waiting for.
	if !inv.State.Terminal() && (inv.Route != mt.RouteGated || adm.Decided || agent.Platform.AsyncTools) {
		inv = s.waitUntil(ctx, inv, deadline)
	}
	if !inv.State.Terminal() && !adm.Created {
		inv = s.finalizeStranded(ctx, inv)
	}
	approvalID := adm.ApprovalID
	if approvalID == "" && inv.Route == mt.RouteGated {
		if apr, err := s.cfg.Store.ApprovalRequestGetByKey(ctx, inv.OperationKey); err == nil {
			approvalID = apr.ID
		}
	}
	out := apitype.PlatformAnswer{State: inv.State, InvocationID: inv.ID, ApprovalID: approvalID}
	worded := inv
	if adm.Decided && worded.State == mt.InvocationAwaitingApproval {
		// A rule approved the call: it runs, and waits for no human.
		worded.State = mt.InvocationRunning
	}
	obs := s.pendingObservation(worded, approvalID)
	if (inv.State.Terminal() || answered(inv)) && inv.Observation != nil {
		obs = *inv.Observation
	}
	out.Status, out.Code, out.Summary, out.Wording, out.Receipt = obs.Status, obs.Code, obs.Summary, obs.Wording, obs.Receipt
	if out.Wording == "" {
		out.Wording = obs.Summary
	}
	return out
}

// platformRefusal is a refusal whose summary says what was wrong, for the
// platform's log and, for a tool call, the model.
func platformRefusal(status int, code mt.Code, summary, remediation string) *apitype.Refusal {
	return &apitype.Refusal{HTTPStatus: status, Observation: observation.Error(observation.Failure{
		Code:          code,
		Summary:       summary,
		RootCause:     summary,
		Remediation:   remediation,
		StopCondition: "Do not send the same request again.",
	}, &mt.Source{System: "maestro"})}
}

func refusalAnswer(ref *apitype.Refusal) apitype.PlatformAnswer {
	o := ref.Observation
	wording := o.Summary
	if o.NextActions != nil && o.NextActions.Remediation != "" {
		wording += " " + o.NextActions.Remediation
	}
	return apitype.PlatformAnswer{Status: mt.StatusError, Code: o.Code, Summary: o.Summary, Wording: wording}
}

// recordSignedFacts makes what the platform vouches for about the call
// session facts of provenance platform-signed:<platform>, under the names
// the agent's platform block maps them to, creating the session if this
// is its first call. Its callers have held call.ID to the identifier rule
// (checkPlatformIDs). A new session past maxLive of the agent's sessions not
// ended is refused (0 for no cap).
func (s *Server) recordSignedFacts(ctx context.Context, r *http.Request, agent *tools.Agent, call platform.Call, maxLive int) *apitype.Refusal {
	prov, err := mt.PlatformSigned(string(agent.Platform.Kind))
	if err != nil {
		s.cfg.Logger.Error("platform provenance", "err", err)
		return unavailableRefusal()
	}
	facts, provs := map[string]string{}, map[string]mt.Provenance{}
	for field, fact := range agent.Platform.Facts {
		if v := call.Signed[field]; v != "" && len(v) <= maxFactBytes {
			facts[fact], provs[fact] = v, prov
		}
	}
	sess, err := s.cfg.Store.SessionUpsertCapped(ctx, ledger.Session{ID: call.ID, AgentID: agent.ID, Facts: facts, Provenance: provs}, maxLive)
	if ref := admission.RefuseOverCap(err); ref != nil {
		s.logRefusal(r, agent.ID, call.ID, ref)
		return ref
	}
	if err != nil {
		s.cfg.Logger.Error("could not record the session", "session", call.ID, "err", err)
		return unavailableRefusal()
	}
	if sess.AgentID != agent.ID {
		ref := admission.RefuseSessionForbidden(call.ID)
		s.logRefusal(r, agent.ID, call.ID, ref)
		return ref
	}
	for name, v := range facts {
		if f, ok := sess.Fact(name); ok && f.Value == v && f.Provenance == prov {
			continue
		}
		if _, err := s.cfg.Store.SessionFactSet(ctx, call.ID, name, mt.Fact{Value: v, Provenance: prov}); err != nil {
			s.cfg.Logger.Error("could not record a signed fact", "session", call.ID, "fact", name, "err", err)
			return unavailableRefusal()
		}
	}
	return nil
}

// waitUntil is wait with a deadline of the platform's own rather than the
// API's wait timeout.
func (s *Server) waitUntil(ctx context.Context, inv ledger.Invocation, deadline time.Time) ledger.Invocation {
	waitCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if s.composite(inv.Tool) {
		var stop context.CancelFunc
		waitCtx, stop = s.untilAnswered(waitCtx, inv.ID)
		defer stop()
	}
	for {
		var res workflows.InvocationResult
		err := s.cfg.Temporal.GetWorkflow(waitCtx, inv.WorkflowID, "").Get(waitCtx, &res)
		// The ledger is read even once the deadline has passed: it says
		// how the call stands at the moment of answering.
		readCtx, cancelRead := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		got, gerr := s.cfg.Store.InvocationGet(readCtx, inv.ID)
		cancelRead()
		if gerr != nil {
			s.cfg.Logger.Error("could not read invocation", "invocation", inv.ID, "err", gerr)
			return inv
		}
		if got.State.Terminal() || answered(got) || err == nil || waitCtx.Err() != nil {
			return got
		}
		select {
		case <-waitCtx.Done():
			return got
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// platformEnd ends the platform's call in maestro, as POST
// /v1/sessions/{id}/end does: the ledger decides which event ended it, so
// a platform's retries deliver the call-ended signal once. A call that
// made no tool call has no session yet: the event creates it, with the
// facts the platform signs, as a first tool call would, so the post-call
// rules still read its transcript.
func (s *Server) platformEnd(ctx context.Context, r *http.Request, agent *tools.Agent, call platform.Call, transcript mt.Transcript) (apitype.PlatformEventResult, *apitype.Refusal) {
	sessionID := call.ID
	out := apitype.PlatformEventResult{Handled: true, SessionID: sessionID}
	if ref := checkPlatformIDs(agent.Platform.Kind, call, nil); ref != nil {
		s.logRefusal(r, agent.ID, "", ref)
		return out, ref
	}
	sess, err := s.cfg.Store.SessionGet(ctx, sessionID)
	if errors.Is(err, ledger.ErrNotFound) {
		// Not capped: the session ends as it opens, and refusing it would
		// drop the call's post-call work.
		if ref := s.recordSignedFacts(ctx, r, agent, call, 0); ref != nil {
			return out, ref
		}
		sess, err = s.cfg.Store.SessionGet(ctx, sessionID)
	}
	switch {
	case err != nil:
		s.cfg.Logger.Error("could not read session", "err", err)
		return out, unavailableRefusal()
	case sess.AgentID != agent.ID:
		ref := admission.RefuseSessionForbidden(sessionID)
		s.logRefusal(r, agent.ID, sessionID, ref)
		return out, ref
	}
	// A session of a call without tool calls has no workflow yet; one
	// that has one keeps it. Started before the end is recorded, so an
	// event answered 503 here is retried and finds nothing ended.
	if ref := s.ensureSessionWorkflow(ctx, agent, sess); ref != nil {
		return out, ref
	}
	first, err := s.endSession(ctx, sess.ID, transcript, "")
	if err != nil {
		s.cfg.Logger.Error("could not end session", "err", err)
		return out, unavailableRefusal()
	}
	out.Ended = first
	if !first {
		out.Detail = "the call had already ended"
	}
	return out, nil
}

// writeEventResult answers an end-of-call event; a failure the platform
// may retry is a 5xx, after which the signature may be sent again.
func (s *Server) writeEventResult(w http.ResponseWriter, r *http.Request, sig platform.Signed, out apitype.PlatformEventResult, ref *apitype.Refusal) {
	if ref != nil {
		if ref.HTTPStatus >= 500 {
			s.forget(r, sig)
		}
		writeRefusal(w, ref)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handlePlatformExport answers the tool definitions to paste into the
// platform's dashboard: for an operator, any agent's; for an agent, its
// own.
func (s *Server) handlePlatformExport(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("agent")
	client, refused := s.throttled(w, r)
	if refused {
		return
	}
	key := bearer(r)
	_, isOps := s.cfg.Catalog.Load().OperatorByKey(key)
	self, isAgent := s.cfg.Catalog.Load().AgentByKey(key)
	s.keyChecked(client, "agent or operator key", key, isOps || isAgent)
	switch {
	case !isOps && !isAgent:
		w.Header().Set("WWW-Authenticate", `Bearer realm="maestro"`)
		writeRefusal(w, admission.BadRequest(http.StatusUnauthorized, mt.CodeUnauthorized,
			"an agent or operator key is required: send Authorization: Bearer <key>"))
		return
	case !isOps && self.ID != id:
		writeRefusal(w, platformRefusal(http.StatusForbidden, mt.CodeSessionForbidden, "an agent key exports only its own agent's tools", "Use an operator key, or the agent's own."))
		return
	}
	agent, ok := s.cfg.Catalog.Load().Agent(id)
	if !ok {
		writeRefusal(w, platformRefusal(http.StatusNotFound, mt.CodeNotFound, "no agent "+id, "Name an agent of the catalog."))
		return
	}
	kind := tools.PlatformKind(r.PathValue("platform"))
	if agent.Platform == nil || agent.Platform.Kind != kind {
		writeRefusal(w, platformRefusal(http.StatusNotFound, mt.CodeNotFound, fmt.Sprintf("agent %s is not configured for %s", id, kind),
			fmt.Sprintf("Give the agent a platform block with kind: %s in the catalog.", kind)))
		return
	}
	out, err := platform.ExportWithout(s.cfg.Catalog.Load(), agent, s.baseURL(r), s.cfg.Canary.Withheld)
	if err != nil {
		s.cfg.Logger.Error("could not export platform tools", "agent", id, "err", err)
		writeRefusal(w, internalRefusal())
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// baseURL is where platforms reach maestro: the public URL when one is
// configured, else the URL this request reached.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
