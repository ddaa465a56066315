package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/platform"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// handleRetellFunction runs one Retell custom function call.
func (s *Server) handleRetellFunction(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.readPlatform(w, r, tools.PlatformRetell)
	if !ok {
		return
	}
	sig, err := platform.VerifyRetell(r.Header.Get("X-Retell-Signature"), pr.body, pr.secret, time.Now())
	if !s.verified(w, r, pr, sig, err) {
		return
	}
	fn, err := platform.ParseRetellFunction(pr.body)
	var badArgs *platform.ArgumentsError
	switch {
	case errors.As(err, &badArgs):
		// The model filled them in: it hears so, and may call again.
		writeJSON(w, http.StatusOK, refusalAnswer(platformRefusal(http.StatusBadRequest, mt.CodeInvalidArgs, err.Error(),
			"Call the function again with its arguments as a JSON object.")))
		return
	case err != nil:
		s.refuseUnreadable(w, r, pr, sig, err)
		return
	}
	// Retell sends no tool-call ID; its signature is unique to the call.
	tc := platform.ToolCall{ID: "retell-" + sig.ID[len("retell:"):][:24], Name: fn.Name, Args: fn.Args}
	writeJSON(w, http.StatusOK, s.platformInvoke(r.Context(), r, pr.agent, fn.Call.CallInfo(), tc, s.toolDeadline(w, r, pr)))
}

// handleRetellWebhook ends the call on call_ended or call_analyzed,
// whichever comes first; call_started is acknowledged.
func (s *Server) handleRetellWebhook(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.readPlatform(w, r, tools.PlatformRetell)
	if !ok {
		return
	}
	sig, err := platform.VerifyRetell(r.Header.Get("X-Retell-Signature"), pr.body, pr.secret, time.Now())
	if !s.verified(w, r, pr, sig, err) {
		return
	}
	ev, err := platform.ParseRetellWebhook(pr.body)
	if err != nil {
		s.refuseUnreadable(w, r, pr, sig, err)
		return
	}
	if ev.Event != platform.RetellCallEnded && ev.Event != platform.RetellCallAnalyzed {
		writeJSON(w, http.StatusOK, apitype.PlatformEventResult{SessionID: ev.Call.CallID, Detail: "event " + ev.Event + " needs no action"})
		return
	}
	out, ref := s.platformEnd(r.Context(), r, pr.agent, ev.Call.CallInfo(), ev.Call.Turns())
	s.writeEventResult(w, r, sig, out, ref)
}
