package api

import (
	"fmt"
	"net/http"

	"github.com/maestro-run/maestro/admission"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/observation"
)

// handleReady answers once the server exists: it is only built after
// PostgreSQL and Temporal have answered.
func handleReady(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, apitype.Readiness{Status: apitype.ReadinessReady})
}

// StartingHandler answers while maestro waits for its dependencies, before
// the API proper exists: /healthz says the process is up, /readyz names the
// dependency still missing, and every other route is refused with 503 so a
// client retries instead of giving up. status reports the wait's progress.
func StartingHandler(status func() apitype.Readiness) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusServiceUnavailable, status())
	})
	mux.HandleFunc("GET /openapi.yaml", handleOpenAPI)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeRefusal(w, startingRefusal(status()))
	})
	return mux
}

func startingRefusal(st apitype.Readiness) *admission.Refusal {
	return &admission.Refusal{HTTPStatus: http.StatusServiceUnavailable, Observation: observation.Error(observation.Failure{
		Code:          mt.CodeStarting,
		Summary:       "maestro is starting; nothing was run",
		RootCause:     fmt.Sprintf("maestro is still waiting for %s to answer.", st.WaitingFor),
		Remediation:   "Retry the same request with the same operation key in a few seconds; GET /readyz says when maestro is ready.",
		StopCondition: "Stop after a minute of refusals and hand over to a human.",
	}, &mt.Source{System: "maestro"})}
}
