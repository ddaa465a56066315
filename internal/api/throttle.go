package api

import (
	"fmt"
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/observation"
	"github.com/maestro-run/maestro/internal/throttle"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// throttled answers 429, checking nothing, a client that failed too many
// key checks of late (see Config.Throttle); otherwise it returns the
// client for keyChecked.
func (s *Server) throttled(w http.ResponseWriter, r *http.Request) (client string, refused bool) {
	client = s.cfg.Throttle.Client(r)
	wait := s.cfg.Throttle.Wait(client)
	if wait <= 0 {
		return client, false
	}
	throttle.RetryAfter(w, wait)
	writeRefusal(w, throttledRefusal(throttle.Seconds(wait)))
	return client, true
}

// keyChecked records the outcome of client's check of key with the
// throttle. A request without a key guesses nothing, so it is not counted.
func (s *Server) keyChecked(client, what, key string, ok bool) {
	switch {
	case ok:
		s.cfg.Throttle.Succeeded(client)
	case key != "":
		s.cfg.Throttle.Failed(client, what)
	}
}

func throttledRefusal(seconds int) *apitype.Refusal {
	return &apitype.Refusal{HTTPStatus: http.StatusTooManyRequests, Observation: observation.Error(observation.Failure{
		Code:          mt.CodeTooManyAttempts,
		Summary:       "Too many requests with a wrong key came from this address; this one was not checked",
		RootCause:     "Requests from this address failed the key check too often, so they are refused for a while before any check.",
		Remediation:   fmt.Sprintf("Wait %d s (Retry-After), then send the request again with a valid key.", seconds),
		StopCondition: "Do not send anything before the wait is over: each failure doubles it.",
	}, &mt.Source{System: "maestro"})}
}
