package api

import (
	"net/http"

	twilioclient "github.com/twilio/twilio-go/client"

	"github.com/maestro-run/maestro/admission"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/observation"
)

// twilioStatuses are the MessageStatus values Twilio reports. A signed
// callback with any other value is still refused: a receipt's status is
// only ever a word its provider uses.
var twilioStatuses = map[string]bool{
	"accepted": true, "scheduled": true, "queued": true, "sending": true, "sent": true,
	"delivered": true, "undelivered": true, "failed": true, "read": true, "canceled": true,
	"receiving": true, "received": true, "partially_delivered": true,
}

// handleTwilioStatus takes Twilio's status callbacks for messages maestro
// sent and moves the matching receipt's status. The route carries no bearer
// key (Twilio cannot send one), so X-Twilio-Signature is the only proof a
// callback came from Twilio: without a valid one nothing is read from the
// body, nothing is written, and the attempt is logged.
func (s *Server) handleTwilioStatus(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		writeRefusal(w, admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, "the callback body is not a form: "+err.Error()))
		return
	}
	params, single := formParams(r)
	if !single || !s.validTwilioSignature(r, params) {
		s.cfg.Logger.Warn("refused a Twilio status callback: X-Twilio-Signature does not validate",
			"remote_addr", r.RemoteAddr, "url", callbackURL(r), "message_sid", params["MessageSid"], "message_status", params["MessageStatus"])
		writeRefusal(w, refuseUnsignedCallback())
		return
	}

	sid, status := params["MessageSid"], params["MessageStatus"]
	if sid == "" || !twilioStatuses[status] {
		writeRefusal(w, admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, "a status callback needs a MessageSid and a MessageStatus Twilio uses"))
		return
	}
	effs, err := s.cfg.Store.EffectReceiptStatusUpdate(r.Context(), sid, status)
	if err != nil {
		s.cfg.Logger.Error("error recording a Twilio status callback", "message_sid", sid, "message_status", status, "err", err)
		writeRefusal(w, internalRefusal())
		return
	}
	// A callback for a message no receipt carries is acknowledged all the
	// same: Twilio reports on every message of the account, including ones
	// sent by other systems, and a refusal would only be retried.
	s.cfg.Logger.Info("Twilio status callback", "message_sid", sid, "message_status", status, "receipts_updated", len(effs))
	w.WriteHeader(http.StatusNoContent)
}

// validTwilioSignature checks the signature against the auth token of the
// Twilio account maestro sends from. With no token configured no callback
// can be proved authentic, so every one is refused.
func (s *Server) validTwilioSignature(r *http.Request, params map[string]string) bool {
	if s.cfg.TwilioAuthToken == "" {
		return false
	}
	v := twilioclient.NewRequestValidator(s.cfg.TwilioAuthToken)
	return v.Validate(callbackURL(r), params, r.Header.Get("X-Twilio-Signature"))
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

// callbackURL is the URL Twilio signed: the one it was told to call. Behind
// a TLS-terminating proxy that is https and the proxy's host, which the
// proxy reports in X-Forwarded-Proto and Host. Trusting those headers is
// safe here: they only choose which URL the signature is checked against,
// and no URL validates without the auth token.
func callbackURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.RequestURI()
}

func refuseUnsignedCallback() *admission.Refusal {
	return &admission.Refusal{HTTPStatus: http.StatusForbidden, Observation: observation.Error(observation.Failure{
		Code:          mt.CodeUnauthorized,
		Summary:       "maestro refused a status callback whose X-Twilio-Signature does not validate",
		RootCause:     "The signature is missing, was computed with another auth token, or covers a different URL or body.",
		Remediation:   "Configure the callback URL exactly as maestro is reached and sign with the sending account's auth token.",
		StopCondition: "Stop: the callback was not recorded and retrying it unchanged will be refused again.",
	}, &mt.Source{System: "maestro"})}
}
