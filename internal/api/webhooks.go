package api

import (
	"net/http"
	"strings"

	twilioclient "github.com/twilio/twilio-go/client"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// TwilioStatusPath is where Twilio posts status callbacks for the messages
// maestro sends.
const TwilioStatusPath = "/v1/webhooks/twilio/status"

// TwilioStatusCallbackURL is the StatusCallback maestro gives Twilio with
// every message: TwilioStatusPath under the base URL Twilio reaches maestro
// at.
func TwilioStatusCallbackURL(publicURL string) string {
	return strings.TrimRight(publicURL, "/") + TwilioStatusPath
}

// idempotencyTokenHeader carries Twilio's token for one webhook request;
// a retry of the same request carries the same token.
const idempotencyTokenHeader = "I-Twilio-Idempotency-Token"

// handleTwilioStatus takes Twilio's status callbacks for messages maestro
// sent and records them in the message status store, by SID: a callback
// may arrive before the ledger has settled the send, and is joined to it
// by the receipt when read. The route carries no bearer key (Twilio cannot
// send one), so X-Twilio-Signature is the only proof a callback came from
// Twilio: without a valid one nothing is read from the body, nothing is
// written, and the attempt is logged.
func (s *Server) handleTwilioStatus(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		writeRefusal(w, admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, "the callback body is not a form: "+err.Error()))
		return
	}
	params, single := formParams(r)
	if !single || !s.validTwilioSignature(r, params) {
		s.cfg.Logger.Warn("refused a Twilio status callback: X-Twilio-Signature does not validate",
			"remote_addr", r.RemoteAddr, "url", s.signedURL(r), "message_sid", params["MessageSid"], "message_status", params["MessageStatus"])
		writeRefusal(w, refuseUnsignedCallback())
		return
	}

	report := ledger.MessageStatusReport{
		Provider:         twilioProvider,
		MessageID:        params["MessageSid"],
		Status:           mt.MessageStatus(params["MessageStatus"]),
		Recipient:        params["To"],
		ErrorCode:        params["ErrorCode"],
		IdempotencyToken: r.Header.Get(idempotencyTokenHeader),
	}
	if report.MessageID == "" || !report.Status.Valid() {
		writeRefusal(w, admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest,
			"a status callback needs a MessageSid and a MessageStatus an outbound message can have"))
		return
	}
	ms, outcome, err := s.cfg.Store.MessageStatusRecord(r.Context(), report)
	if err != nil {
		s.cfg.Logger.Error("error recording a Twilio status callback", "message_sid", report.MessageID, "message_status", report.Status, "err", err)
		writeRefusal(w, internalRefusal())
		return
	}
	level := s.cfg.Logger.Info
	if outcome != ledger.MessageStatusReplayed && ms.Status.Failed() {
		level = s.cfg.Logger.Warn
	}
	level("Twilio status callback", "message_sid", report.MessageID, "message_status", report.Status,
		"outcome", outcome, "status_now", ms.Status, "error_code", ms.ErrorCode)
	// A replay and a stale status are answered 200 all the same: the
	// callback was Twilio's and has been taken into account, and a refusal
	// would only be retried.
	writeJSON(w, http.StatusOK, apitype.StatusCallbackAck{MessageID: ms.MessageID, Status: ms.Status, Outcome: string(outcome)})
}

// validTwilioSignature checks the signature against the auth token of the
// Twilio account maestro sends from. With no token configured no callback
// can be proved authentic, so every one is refused.
func (s *Server) validTwilioSignature(r *http.Request, params map[string]string) bool {
	if s.cfg.TwilioAuthToken == "" {
		return false
	}
	v := twilioclient.NewRequestValidator(s.cfg.TwilioAuthToken)
	return v.Validate(s.signedURL(r), params, r.Header.Get("X-Twilio-Signature"))
}

// signedURL is the URL Twilio signed: the StatusCallback it was given,
// which is the public URL's when one is configured. Without one it is the
// URL the request reached: behind a TLS-terminating proxy that is https and
// the proxy's host, which the proxy reports in X-Forwarded-Proto and Host.
// Trusting those headers is safe here: they only choose which URL the
// signature is checked against, and no URL validates without the auth
// token.
func (s *Server) signedURL(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return TwilioStatusCallbackURL(s.cfg.PublicURL)
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.RequestURI()
}

// formParams flattens the POSTed form for the validator. Twilio's status
// callbacks never repeat a parameter; a form that does cannot be checked
// faithfully against a signature over single values, so single is false
// and the callback is refused rather than checked against half its data.
func formParams(r *http.Request) (params map[string]string, single bool) {
	params = make(map[string]string, len(r.PostForm))
	for name, values := range r.PostForm {
		if len(values) != 1 {
			return params, false
		}
		params[name] = values[0]
	}
	return params, true
}

func refuseUnsignedCallback() *apitype.Refusal {
	return &apitype.Refusal{HTTPStatus: http.StatusForbidden, Observation: observation.Error(observation.Failure{
		Code:          mt.CodeUnauthorized,
		Summary:       "maestro refused a status callback whose X-Twilio-Signature does not validate",
		RootCause:     "The signature is missing, was computed with another auth token, or covers a different URL or body.",
		Remediation:   "Configure the callback URL exactly as maestro is reached and sign with the sending account's auth token.",
		StopCondition: "Stop: the callback was not recorded and retrying it unchanged will be refused again.",
	}, &mt.Source{System: "maestro"})}
}
