package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// ConnectorKind names the built-in connector that performs a tool.
type ConnectorKind string

const (
	// KindTwilioSMS sends one SMS through Twilio. Settings: to, body.
	KindTwilioSMS ConnectorKind = "twilio_sms"
	// KindSESEmail sends one email through Amazon SES. Settings: to,
	// subject, body.
	KindSESEmail ConnectorKind = "ses_email"
	// KindPage reaches a human on two channels at once, an SMS and an
	// email. Settings: sms_to, sms_body, email_to, email_subject,
	// email_body.
	KindPage ConnectorKind = "page"
	// KindHTTP calls a JSON API. Settings: service, method, path, and
	// optionally id_field and status_field naming the response fields that
	// prove the effect (default "id" and "status").
	KindHTTP ConnectorKind = "http"
	// KindDeferred performs nothing during the call: the post-call workflow
	// delivers. Only record-deferred tools use it.
	KindDeferred ConnectorKind = "deferred"
)

// Receipt fields the built-in connectors produce.
const (
	ReceiptMessageSID = "message_sid" // Twilio message SID
	ReceiptMessageID  = "message_id"  // SES message ID
	ReceiptResourceID = "resource_id" // ID of the resource an HTTP API created or changed
	ReceiptStatus     = "status"      // the provider's status at receipt time
)

// kindSpec is what the catalog needs to know about a connector kind.
type kindSpec struct {
	required []string
	optional []string
	// static settings are checked at load, so they may not be templated.
	static []string
	// receipt lists the fields the connector fills in; proof lists those
	// that identify the effect at the provider, which every receipt must
	// carry.
	receipt []string
	proof   []string
	// acceptedOnly: the receipt proves the provider accepted a message,
	// not that it reached anyone (Twilio answers queued, SES accepted).
	acceptedOnly bool
}

var kinds = map[ConnectorKind]kindSpec{
	KindTwilioSMS: {
		required:     []string{"to", "body"},
		receipt:      []string{ReceiptMessageSID, ReceiptStatus},
		proof:        []string{ReceiptMessageSID},
		acceptedOnly: true,
	},
	KindSESEmail: {
		required:     []string{"to", "subject", "body"},
		receipt:      []string{ReceiptMessageID},
		proof:        []string{ReceiptMessageID},
		acceptedOnly: true,
	},
	KindPage: {
		required:     []string{"sms_to", "sms_body", "email_to", "email_subject", "email_body"},
		receipt:      []string{ReceiptMessageSID, ReceiptMessageID, ReceiptStatus},
		proof:        []string{ReceiptMessageSID, ReceiptMessageID},
		acceptedOnly: true,
	},
	KindHTTP: {
		required: []string{"service", "method", "path"},
		optional: []string{"id_field", "status_field"},
		static:   []string{"service", "method", "id_field", "status_field"},
		receipt:  []string{ReceiptResourceID, ReceiptStatus},
		proof:    []string{ReceiptResourceID},
	},
	KindDeferred: {},
}

// Valid reports whether k is a built-in connector kind.
func (k ConnectorKind) Valid() bool {
	_, ok := kinds[k]
	return ok
}

// httpMethods are the methods the HTTP connector may use; GET is the only
// one without an effect.
var httpMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// Connector says which built-in connector performs a tool and with what
// settings.
type Connector struct {
	Kind ConnectorKind
	// Settings are rendered per call and handed to the connector by name.
	// A setting without template actions renders to itself.
	Settings map[string]*Template
	// Body, for the HTTP connector, is the JSON request body as a map of
	// templates; every value renders as a string. When nil, the call's
	// arguments are sent as they are, keeping their JSON types.
	Body map[string]*Template
}

// Method returns the HTTP method of an HTTP connector, or "".
func (c Connector) Method() string {
	if c.Kind != KindHTTP {
		return ""
	}
	if m, ok := c.Settings["method"]; ok && m != nil {
		return m.String()
	}
	return ""
}

// PerformsEffect reports whether the connector changes something a
// provider can later confirm. An HTTP GET, the deferred kind and any kind
// this package does not know perform nothing.
func (c Connector) PerformsEffect() bool {
	switch c.Kind {
	case KindTwilioSMS, KindSESEmail, KindPage:
		return true
	case KindHTTP:
		return slices.Contains(httpMethods, c.Method()) && c.Method() != http.MethodGet
	}
	return false
}

// ReceiptFields lists the receipt fields the connector produces; it is
// empty for a connector that performs no effect.
func (c Connector) ReceiptFields() []string {
	if !c.PerformsEffect() {
		return nil
	}
	return slices.Clone(kinds[c.Kind].receipt)
}

// ReceiptProvesAcceptanceOnly reports whether the connector's receipt
// proves only that a provider accepted a message for delivery, as every
// synchronous send's does: delivery is reported later, if at all, so
// wording rendered at the receipt may say sent, never delivered.
func (c Connector) ReceiptProvesAcceptanceOnly() bool {
	return c.PerformsEffect() && kinds[c.Kind].acceptedOnly
}

// ProofFields lists the receipt fields that identify the effect at the
// provider. A real-sync tool's receipt must declare all of them.
func (c Connector) ProofFields() []string {
	if !c.PerformsEffect() {
		return nil
	}
	return slices.Clone(kinds[c.Kind].proof)
}

// HTTPService returns the service an HTTP connector calls, or "".
func (c Connector) HTTPService() string {
	if c.Kind != KindHTTP {
		return ""
	}
	if s, ok := c.Settings["service"]; ok && s != nil {
		return s.String()
	}
	return ""
}

// ConnectorCall is a tool's connector call rendered for one invocation:
// everything the connector needs, with no templates left.
type ConnectorCall struct {
	Kind     ConnectorKind
	Settings map[string]string
	// Body is the JSON request body of an HTTP call; nil for GET and
	// DELETE requests and for every other kind.
	Body json.RawMessage
}

// RenderCall renders the tool's connector call. It runs before the effect,
// so data carries no receipt.
func (t *Tool) RenderCall(data TemplateData) (ConnectorCall, error) {
	settings, err := t.Connector.renderSettings(data)
	if err != nil {
		return ConnectorCall{}, err
	}
	body, err := t.Connector.renderBody(data)
	if err != nil {
		return ConnectorCall{}, err
	}
	return ConnectorCall{Kind: t.Connector.Kind, Settings: settings, Body: body}, nil
}

func (c Connector) renderSettings(data TemplateData) (map[string]string, error) {
	out := make(map[string]string, len(c.Settings))
	for name, t := range c.Settings {
		v, err := t.Execute(data)
		if err != nil {
			return nil, fmt.Errorf("error rendering connector setting %s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// renderBody sends the arguments as they are unless the catalog maps the
// body explicitly, so amounts keep their JSON types.
func (c Connector) renderBody(data TemplateData) (json.RawMessage, error) {
	if c.Kind != KindHTTP || c.Method() == http.MethodGet || c.Method() == http.MethodDelete {
		return nil, nil
	}
	if c.Body == nil {
		body, err := json.Marshal(data.Args)
		if err != nil {
			return nil, fmt.Errorf("error encoding arguments as request body: %w", err)
		}
		return body, nil
	}
	fields := make(map[string]string, len(c.Body))
	for name, t := range c.Body {
		v, err := t.Execute(data)
		if err != nil {
			return nil, fmt.Errorf("error rendering request body field %s: %w", name, err)
		}
		fields[name] = v
	}
	body, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("error encoding request body: %w", err)
	}
	return body, nil
}
