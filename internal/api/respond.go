package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// refusalBody is the envelope of every refused request.
type refusalBody struct {
	Observation mt.Observation `json:"observation"`
}

func writeRefusal(w http.ResponseWriter, r *apitype.Refusal) {
	writeJSON(w, r.HTTPStatus, refusalBody{Observation: r.Observation})
}

// logRefusal records a refusal the HTTP layer decides in the ledger's
// refusal log, next to the gate's, naming the route that was refused.
func (s *Server) logRefusal(r *http.Request, agentID, sessionID string, ref *apitype.Refusal) {
	// A client hanging up does not take the record of its refusal with it.
	err := s.cfg.Store.RefusalInsert(context.WithoutCancel(r.Context()), ledger.Refusal{
		AgentID:   agentID,
		SessionID: sessionID,
		Code:      ref.Observation.Code,
		Detail:    ref.Observation.Summary + " (" + r.Method + " " + r.URL.Path + ")",
	})
	if err != nil {
		s.cfg.Logger.Error("could not log refusal", "err", err, "code", ref.Observation.Code)
	}
	s.cfg.Logger.Info("request refused", "agent", agentID, "session", sessionID, "route", r.Method+" "+r.URL.Path, "code", ref.Observation.Code)
}

func internalRefusal() *apitype.Refusal {
	return &apitype.Refusal{HTTPStatus: http.StatusInternalServerError, Observation: observation.Error(observation.Failure{
		Code:          mt.CodeInternal,
		Summary:       "maestro could not finish admitting or answering the call",
		RootCause:     "An internal error, logged by the server.",
		Remediation:   "Retry the same request with the same operation key: it is safe, never runs the effect twice, and picks up where this attempt stopped.",
		StopCondition: "Stop after three failures and hand over to a human.",
	}, &mt.Source{System: "maestro"})}
}

func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	writeRefusal(w, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "no route for "+r.Method+" "+r.URL.Path))
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
