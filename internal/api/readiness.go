package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// handleReady says whether this process should be sent work: 200 while it
// is, 503 with the reason while it is not (a dependency down, draining).
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	writeReadiness(w, r.Context(), s.cfg.Ready)
}

func writeReadiness(w http.ResponseWriter, ctx context.Context, ready func(context.Context) apitype.Readiness) {
	st := apitype.Readiness{Status: apitype.ReadinessReady}
	if ready != nil {
		st = ready(ctx)
	}
	code := http.StatusOK
	if st.Status != apitype.ReadinessReady {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, st)
}

// ProbeHandler is all a process that runs the worker and not the API
// serves: /healthz says it is up, /readyz whether it can take work, and
// every other route is refused with 404 naming the process's role, so a
// load balancer pointed at it by mistake says why.
func ProbeHandler(ready func(context.Context) apitype.Readiness) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		writeReadiness(w, r.Context(), ready)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeRefusal(w, &apitype.Refusal{HTTPStatus: http.StatusNotFound, Observation: observation.Error(observation.Failure{
			Code:          mt.CodeNotFound,
			Summary:       "this maestro process runs the worker only; nothing was run",
			RootCause:     "The request reached a maestro process started with --role worker, which serves no API.",
			Remediation:   "Send API requests to a process started with --role api or --role all.",
			StopCondition: "Do not retry against this address.",
		}, &mt.Source{System: "maestro"})})
	})
	return mux
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

func startingRefusal(st apitype.Readiness) *apitype.Refusal {
	return &apitype.Refusal{HTTPStatus: http.StatusServiceUnavailable, Observation: observation.Error(observation.Failure{
		Code:          mt.CodeStarting,
		Summary:       "maestro is starting; nothing was run",
		RootCause:     fmt.Sprintf("maestro is still waiting for %s to answer.", st.WaitingFor),
		Remediation:   "Retry the same request with the same operation key in a few seconds; GET /readyz says when maestro is ready.",
		StopCondition: "Stop after a minute of refusals and hand over to a human.",
	}, &mt.Source{System: "maestro"})}
}
