package api

import (
	"net/http"
	"time"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/platform"
	"github.com/maestro-run/maestro/tools"
)

// handleElevenLabsTool runs one call of an ElevenLabs server tool. The
// platform authenticates it with the secret in the Authorization header;
// the call comes from the system__ dynamic variables in the body, the
// arguments from the rest.
func (s *Server) handleElevenLabsTool(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.readPlatform(w, r, tools.PlatformElevenLabs)
	if !ok {
		return
	}
	if !s.verified(w, r, pr, platform.Signed{}, platform.VerifyBearer(r.Header.Get("Authorization"), pr.secret)) {
		return
	}
	call, args, err := platform.ParseElevenLabsTool(pr.body)
	if err != nil {
		s.refuseUnreadable(w, r, pr, platform.Signed{}, err)
		return
	}
	// ElevenLabs sends no tool-call ID: a repeatable tool's calls are told
	// apart by the moment they arrive.
	tc := platform.ToolCall{ID: "el-" + time.Now().UTC().Format("20060102T150405.000000000"), Name: r.PathValue("tool"), Args: args}
	writeJSON(w, http.StatusOK, s.platformInvoke(r.Context(), r, pr.agent, call, tc, s.toolDeadline(w, r, pr)))
}

// handleElevenLabsPostCall ends the call on ElevenLabs' post-call
// transcription webhook; other post-call events are acknowledged.
func (s *Server) handleElevenLabsPostCall(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.readPlatform(w, r, tools.PlatformElevenLabs)
	if !ok {
		return
	}
	sig, err := platform.VerifyElevenLabs(r.Header.Get("ElevenLabs-Signature"), pr.body, pr.secret, time.Now())
	if !s.verified(w, r, pr, sig, err) {
		return
	}
	pc, err := platform.ParseElevenLabsPostCall(pr.body)
	if err != nil {
		s.refuseUnreadable(w, r, pr, sig, err)
		return
	}
	if pc.Type != platform.ElevenLabsTranscription {
		writeJSON(w, http.StatusOK, apitype.PlatformEventResult{SessionID: pc.Data.ConversationID, Detail: "event type " + pc.Type + " needs no action"})
		return
	}
	out, ref := s.platformEnd(r.Context(), r, pr.agent, pc.CallInfo(), pc.Transcript())
	s.writeEventResult(w, r, sig, out, ref)
}
