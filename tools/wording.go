package tools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/receipts"
)

// Outcome selects the wording an agent may use after a call.
type Outcome string

const (
	// OutcomeSuccess: the call did what it does. For a real-sync tool the
	// wording is rendered from the receipt; for a record-deferred tool it
	// speaks of the future.
	OutcomeSuccess Outcome = "success"
	// OutcomePending: the call waits for an approver.
	OutcomePending Outcome = "pending"
	// OutcomeFailure: nothing happened, or nothing can be claimed.
	OutcomeFailure Outcome = "failure"
	// OutcomePartial: a tool of several provider effects (a page by text
	// and email) where some went out and some did not, or not yet. The
	// wording names what went out from each part's receipt (.Parts).
	OutcomePartial Outcome = "partial"
)

// Wording is what the agent may say to the human per outcome.
type Wording struct {
	Success *Template
	Pending *Template
	Failure *Template
	// Partial is spoken when some, not all, of a composite tool's parts
	// went out; nil for a tool of one effect.
	Partial *Template
	// SafetyNotice is appended to every wording that is not full success
	// (partial, pending, failure, unknown): an instruction the person must
	// hear whenever the tool cannot say it did everything, such as "If
	// this is an emergency, hang up and dial 911". It may render empty
	// (for a routine call); nil when the tool has none.
	SafetyNotice *Template
}

// For returns the wording for an outcome, or nil.
func (w Wording) For(o Outcome) *Template {
	switch o {
	case OutcomeSuccess:
		return w.Success
	case OutcomePending:
		return w.Pending
	case OutcomeFailure:
		return w.Failure
	case OutcomePartial:
		return w.Partial
	}
	return nil
}

// RenderWording renders the wording for an outcome. Success wording of a
// real-sync tool renders only with a receipt that carries every field the
// tool declares, so the agent can never claim an effect nobody confirmed.
func (t *Tool) RenderWording(o Outcome, data TemplateData) (string, error) {
	w := t.Wording.For(o)
	if w == nil {
		return "", fmt.Errorf("error rendering wording: tool %q has no %s wording", t.Name, o)
	}
	if o == OutcomeSuccess && t.Delivery == maestrotype.DeliveryRealSync {
		if err := receipts.Check(data.Receipt, t.ReceiptFields); err != nil {
			return "", fmt.Errorf("error rendering success wording for %s: %w", t.Name, err)
		}
	}
	if o == OutcomePartial && len(data.Parts) == 0 {
		return "", fmt.Errorf("error rendering partial wording for %s: %w: no part went out", t.Name, receipts.ErrNoReceipt)
	}
	s, err := w.Execute(data)
	if err != nil {
		return "", fmt.Errorf("error rendering wording: %w", err)
	}
	if o == OutcomeSuccess {
		return s, nil
	}
	return WithNotice(s, t.RenderNotice(data)), nil
}

// RenderNotice renders the tool's safety notice, or "" when it has none or
// it renders empty for this call. A notice that fails to render is a
// broken catalog, but the notice is never dropped for it: the template's
// source stands in, since it is the catalog author's own words.
func (t *Tool) RenderNotice(data TemplateData) string {
	n := t.Wording.SafetyNotice
	if n == nil {
		return ""
	}
	s, err := n.Execute(data)
	if err != nil {
		return n.String()
	}
	return strings.TrimSpace(s)
}

// WithNotice appends a safety notice to a wording, once.
func WithNotice(wording, notice string) string {
	if notice == "" || strings.Contains(wording, notice) {
		return wording
	}
	if wording == "" {
		return notice
	}
	return strings.TrimSpace(wording) + " " + notice
}

// EmergencyCapable reports whether the tool is one an agent reaches for in
// an emergency: it pages a human (a page connector, or a "paging" or
// "emergency" risk tag). Such a tool must carry a safety notice (the
// fence checks).
func (t *Tool) EmergencyCapable() bool {
	return t.Connector.Kind == maestrotype.KindPage || slices.ContainsFunc(t.RiskTags, func(tag string) bool {
		return tag == "paging" || tag == "emergency"
	})
}
