package api

import (
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/platform"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// A platform's request that maestro cannot read is answered as the core
// API answers one: an HTTP error with a JSON refusal, which the platform
// logs, never a 200 tool answer the model would read as the tool's. What
// the model is to hear (a refusal by policy, arguments it filled in
// wrongly, a pending call) stays a 200 tool answer.

// platformBodyRefusal holds a verified request's body to what the core
// API's door takes: declared application/json (415 otherwise) and one
// JSON object (400 otherwise). It is checked after the signature, which
// covers the raw body, so an unsigned request learns no more than the 401.
func (s *Server) platformBodyRefusal(w http.ResponseWriter, r *http.Request, body []byte) *apitype.Refusal {
	if ref := requireJSON(r); ref != nil {
		return ref
	}
	return s.checkJSONObject(w, r, body)
}

// refuseUnreadable answers 400 to a verified request whose JSON is not in
// the shape the platform documents. Nothing ran, so its signature is
// forgotten and the platform's retry is answered afresh.
func (s *Server) refuseUnreadable(w http.ResponseWriter, r *http.Request, pr platformRequest, sig platform.Signed, err error) {
	s.forget(r, sig)
	s.refuseAtDoor(w, pr, platformRefusal(http.StatusBadRequest, mt.CodeInvalidRequest, err.Error(),
		"Send the request in the shape the platform documents."))
}

// refuseAtDoor answers a verified request that runs nothing and records
// nothing. The server log says why: a platform that sends what maestro
// cannot read is misconfigured, and its operator looks there.
func (s *Server) refuseAtDoor(w http.ResponseWriter, pr platformRequest, ref *apitype.Refusal) {
	s.cfg.Logger.Warn("platform request refused", "platform", pr.agent.Platform.Kind, "agent", pr.agent.ID,
		"status", ref.HTTPStatus, "reason", ref.Observation.Summary)
	writeRefusal(w, ref)
}
