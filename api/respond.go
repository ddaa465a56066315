package api

import (
	"encoding/json"
	"net/http"

	"github.com/maestro-run/maestro/admission"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/observation"
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

func writeRefusal(w http.ResponseWriter, r *admission.Refusal) {
	writeJSON(w, r.HTTPStatus, refusalBody{Observation: r.Observation})
}

func internalRefusal() *admission.Refusal {
	return &admission.Refusal{HTTPStatus: http.StatusInternalServerError, Observation: observation.Error(observation.Failure{
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
