package maestrotype

// ConnectorKind names the built-in connector that performs a tool. The
// catalog declares it and the connector set routes calls by it.
type ConnectorKind string

const (
	// KindTwilioSMS sends one SMS through Twilio. Settings: to, body.
	KindTwilioSMS ConnectorKind = "twilio_sms"
	// KindSESEmail sends one email through Amazon SES. Settings: to,
	// subject, body.
	KindSESEmail ConnectorKind = "ses_email"
	// KindPage reaches a human on two channels at once, an SMS and an
	// email. Settings: sms_to, sms_body, email_to, email_subject,
	// email_body. The row's on_unknown applies to each part whose
	// provider cannot be searched (ADR 14).
	KindPage ConnectorKind = "page"
	// KindHTTP calls a JSON API. Settings: service, method, path, and
	// optionally id_field and status_field naming the response fields that
	// prove the effect (default "id" and "status").
	KindHTTP ConnectorKind = "http"
	// KindDeferred performs nothing during the call: the post-call workflow
	// delivers. Only record-deferred tools use it.
	KindDeferred ConnectorKind = "deferred"
)

// Valid reports whether k is a built-in connector kind.
func (k ConnectorKind) Valid() bool {
	switch k {
	case KindTwilioSMS, KindSESEmail, KindPage, KindHTTP, KindDeferred:
		return true
	}
	return false
}
