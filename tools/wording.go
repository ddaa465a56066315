package tools

import (
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/maestrotype"
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
)

// Wording is what the agent may say to the human per outcome.
type Wording struct {
	Success *Template
	Pending *Template
	Failure *Template
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
	}
	return nil
}

// ErrNoReceipt is returned when success wording is requested for a
// real-sync call without the receipt that proves it.
var ErrNoReceipt = errors.New("no receipt proves the effect")

// RenderWording renders the wording for an outcome. Success wording of a
// real-sync tool renders only with a receipt that carries every field the
// tool declares, so the agent can never claim an effect nobody confirmed.
func (t *Tool) RenderWording(o Outcome, data TemplateData) (string, error) {
	w := t.Wording.For(o)
	if w == nil {
		return "", fmt.Errorf("error rendering wording: tool %q has no %s wording", t.Name, o)
	}
	if o == OutcomeSuccess && t.Delivery == maestrotype.DeliveryRealSync {
		if err := t.checkReceipt(data.Receipt); err != nil {
			return "", fmt.Errorf("error rendering success wording for %s: %w", t.Name, err)
		}
	}
	s, err := w.Execute(data)
	if err != nil {
		return "", fmt.Errorf("error rendering wording: %w", err)
	}
	return s, nil
}

func (t *Tool) checkReceipt(r *maestrotype.Receipt) error {
	if r == nil || r.ID == "" {
		return ErrNoReceipt
	}
	if len(t.ReceiptFields) == 0 {
		// A real-sync tool that declares nothing to prove cannot be
		// believed, whatever the receipt says.
		return fmt.Errorf("%w: the tool declares no receipt fields", ErrNoReceipt)
	}
	for _, f := range t.ReceiptFields {
		if r.Fields[f] == "" {
			return fmt.Errorf("%w: receipt field %s is missing", ErrNoReceipt, f)
		}
	}
	return nil
}
