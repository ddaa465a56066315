package connectors

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/maestro-run/maestro/maestrotype"
)

// Kind names a connector implementation in the catalog.
type Kind string

const (
	KindTwilioSMS Kind = "twilio_sms"
	KindSESEmail  Kind = "ses_email"
	KindPage      Kind = "page"
	KindHTTP      Kind = "http"
)

// Call is one provider call, fully rendered: the connector applies no
// templates and makes no routing decisions.
type Call struct {
	Kind Kind
	// IdempotencyKey is passed to the provider wherever it accepts one.
	// It is the operation key, or undo-{undo_id} for a compensation.
	IdempotencyKey string
	// Settings are the rendered connector settings from the catalog row
	// (to, body, subject, service, method, path …).
	Settings map[string]string
	// Body is the JSON body for the HTTP connector.
	Body json.RawMessage
}

// Setting returns a required setting or an error naming it.
func (c Call) Setting(name string) (string, error) {
	v, ok := c.Settings[name]
	if !ok || v == "" {
		return "", &Error{Class: ClassInvalid, Message: fmt.Sprintf("connector setting %q is missing or empty", name)}
	}
	return v, nil
}

// Result is what a provider confirmed.
type Result struct {
	// Receipt is nil for reads, which prove nothing was changed.
	Receipt *maestrotype.Receipt
	// Payload is the provider's response, as returned to the agent.
	Payload json.RawMessage
	// Empty is set on a read that found nothing: see HTTP.Do for what that
	// means for the HTTP connector.
	Empty bool
}

// Connector performs calls of one kind.
type Connector interface {
	Do(ctx context.Context, call Call) (Result, error)
}

// Set routes calls to the connector registered for their kind.
type Set map[Kind]Connector

// Do runs call on the connector registered for call.Kind.
func (s Set) Do(ctx context.Context, call Call) (Result, error) {
	c, ok := s[call.Kind]
	if !ok {
		return Result{}, &Error{Class: ClassInvalid, Message: fmt.Sprintf("no connector is configured for kind %q", call.Kind)}
	}
	return c.Do(ctx, call)
}

// Kinds lists the registered kinds, sorted.
func (s Set) Kinds() []Kind {
	out := make([]Kind, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Replayable reports whether resending this call is safe because the
// provider deduplicates on its idempotency key.
func (c Call) Replayable() bool {
	return c.Kind == KindHTTP && c.IdempotencyKey != ""
}

// NewSetFor builds only the connectors of kinds, so that a catalog which
// never texts needs no Twilio account and one which never emails needs no
// SES credentials. A page needs both. Kinds it does not know are left to
// the catalog's own validation.
func NewSetFor(kinds []Kind, tw TwilioConfig, ses SESConfig, h HTTPConfig) (Set, error) {
	need := map[Kind]bool{}
	for _, k := range kinds {
		need[k] = true
	}
	set := Set{}
	var twc *Twilio
	var sesc *SES
	var err error
	if need[KindTwilioSMS] || need[KindPage] {
		if twc, err = NewTwilio(tw); err != nil {
			return nil, err
		}
		set[KindTwilioSMS] = twc
	}
	if need[KindSESEmail] || need[KindPage] {
		if sesc, err = NewSES(ses); err != nil {
			return nil, err
		}
		set[KindSESEmail] = sesc
	}
	if need[KindPage] {
		set[KindPage] = Page{SMS: twc, Email: sesc}
	}
	if need[KindHTTP] {
		set[KindHTTP] = NewHTTP(h)
	}
	return set, nil
}

// NewSet builds the standard connectors: Twilio SMS, SES email, a page
// over both, and the generic HTTP connector.
func NewSet(tw TwilioConfig, ses SESConfig, h HTTPConfig) (Set, error) {
	twc, err := NewTwilio(tw)
	if err != nil {
		return nil, err
	}
	sesc, err := NewSES(ses)
	if err != nil {
		return nil, err
	}
	return Set{
		KindTwilioSMS: twc,
		KindSESEmail:  sesc,
		KindPage:      Page{SMS: twc, Email: sesc},
		KindHTTP:      NewHTTP(h),
	}, nil
}
