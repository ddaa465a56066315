package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/maestro-run/maestro/maestrotype"
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
	// parts names the separate provider effects of a composite connector,
	// each its own exactly-once effect in the ledger (ADR 14).
	parts []string
}

var kinds = map[maestrotype.ConnectorKind]kindSpec{
	maestrotype.KindTwilioSMS: {
		required:     []string{"to", "body"},
		receipt:      []string{maestrotype.ReceiptMessageSID, maestrotype.ReceiptStatus},
		proof:        []string{maestrotype.ReceiptMessageSID},
		acceptedOnly: true,
	},
	maestrotype.KindSESEmail: {
		required:     []string{"to", "subject", "body"},
		receipt:      []string{maestrotype.ReceiptMessageID},
		proof:        []string{maestrotype.ReceiptMessageID},
		acceptedOnly: true,
	},
	maestrotype.KindPage: {
		required:     []string{"sms_to", "sms_body", "email_to", "email_subject", "email_body"},
		receipt:      []string{maestrotype.ReceiptMessageSID, maestrotype.ReceiptMessageID, maestrotype.ReceiptStatus},
		proof:        []string{maestrotype.ReceiptMessageSID, maestrotype.ReceiptMessageID},
		acceptedOnly: true,
		parts:        []string{PartSMS, PartEmail},
	},
	maestrotype.KindHTTP: {
		required: []string{"service", "method", "path"},
		optional: []string{"id_field", "status_field"},
		static:   []string{"service", "method", "id_field", "status_field"},
		receipt:  []string{maestrotype.ReceiptResourceID, maestrotype.ReceiptStatus},
		proof:    []string{maestrotype.ReceiptResourceID},
	},
	maestrotype.KindDeferred: {},
}

// The parts of a page.
const (
	PartSMS   = "sms"
	PartEmail = "email"
)

// Parts names the separate provider effects the connector performs, in
// the order it performs them; nil for a connector of one effect.
func (c Connector) Parts() []string {
	return kinds[c.Kind].parts
}

// httpMethods are the methods the HTTP connector may use; GET is the only
// one without an effect.
var httpMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// Connector says which built-in connector performs a tool and with what
// settings.
type Connector struct {
	Kind maestrotype.ConnectorKind
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
	if c.Kind != maestrotype.KindHTTP {
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
	case maestrotype.KindTwilioSMS, maestrotype.KindSESEmail, maestrotype.KindPage:
		return true
	case maestrotype.KindHTTP:
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
	if c.Kind != maestrotype.KindHTTP {
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
	Kind     maestrotype.ConnectorKind
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
	if c.Kind != maestrotype.KindHTTP || c.Method() == http.MethodGet || c.Method() == http.MethodDelete {
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
