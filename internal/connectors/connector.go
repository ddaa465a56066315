package connectors

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/maestro-run/maestro/maestrotype"
)

// Call is one provider call, fully rendered: the connector applies no
// templates and makes no routing decisions.
type Call struct {
	Kind maestrotype.ConnectorKind
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
type Set map[maestrotype.ConnectorKind]Connector

// Do runs call on the connector registered for call.Kind.
func (s Set) Do(ctx context.Context, call Call) (Result, error) {
	c, ok := s[call.Kind]
	if !ok {
		return Result{}, &Error{Class: ClassInvalid, Message: fmt.Sprintf("no connector is configured for kind %q", call.Kind)}
	}
	return c.Do(ctx, call)
}

// Kinds lists the registered kinds, sorted.
func (s Set) Kinds() []maestrotype.ConnectorKind {
	out := make([]maestrotype.ConnectorKind, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Replayable reports whether resending this call is safe because the
// provider deduplicates on its idempotency key.
func (c Call) Replayable() bool {
	return c.Kind == maestrotype.KindHTTP && c.IdempotencyKey != ""
}

// NewSetFor builds only the connectors of kinds, so that a catalog which
// never texts needs no Twilio account and one which never emails needs no
// SES credentials. A page needs both. Kinds it does not know are left to
// the catalog's own validation.
func NewSetFor(kinds []maestrotype.ConnectorKind, tw TwilioConfig, ses SESConfig, h HTTPConfig) (Set, error) {
	need := map[maestrotype.ConnectorKind]bool{}
	for _, k := range kinds {
		need[k] = true
	}
	set := Set{}
	var twc *Twilio
	var sesc *SES
	var err error
	if need[maestrotype.KindTwilioSMS] || need[maestrotype.KindPage] {
		if twc, err = NewTwilio(tw); err != nil {
			return nil, err
		}
		set[maestrotype.KindTwilioSMS] = twc
	}
	if need[maestrotype.KindSESEmail] || need[maestrotype.KindPage] {
		if sesc, err = NewSES(ses); err != nil {
			return nil, err
		}
		set[maestrotype.KindSESEmail] = sesc
	}
	if need[maestrotype.KindPage] {
		set[maestrotype.KindPage] = Page{SMS: twc, Email: sesc}
	}
	if need[maestrotype.KindHTTP] {
		set[maestrotype.KindHTTP] = NewHTTP(h)
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
		maestrotype.KindTwilioSMS: twc,
		maestrotype.KindSESEmail:  sesc,
		maestrotype.KindPage:      Page{SMS: twc, Email: sesc},
		maestrotype.KindHTTP:      NewHTTP(h),
	}, nil
}
