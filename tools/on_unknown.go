package tools

import "github.com/maestro-run/maestro/maestrotype"

// OnUnknown is what a tool's catalog row (`on_unknown`) says to do when a
// call's outcome is unknown (the provider's answer proves nothing, ADR 9)
// and the provider cannot be searched to find out.
type OnUnknown string

const (
	// OnUnknownHold holds the effect for reconciliation and sends nothing
	// more until it is settled (the default): a duplicate is never risked.
	OnUnknownHold OnUnknown = "hold"
	// OnUnknownResend sends again, under a new operation key, rather than
	// hold: a lost message is worse than a possible duplicate. The held
	// effect is settled by the policy, which says a duplicate is possible.
	// A provider that can be searched is still reconciled by search, never
	// resent blindly. Money and compensable tools may not opt in: a second
	// payment or a second undoable effect is never the lesser harm.
	OnUnknownResend OnUnknown = "resend"
)

// Valid reports whether o is a known value; empty means the default.
func (o OnUnknown) Valid() bool {
	return o == "" || o == OnUnknownHold || o == OnUnknownResend
}

// Resends reports whether the tool opted in to sending again when an
// outcome is unknown and cannot be searched for.
func (t *Tool) Resends() bool {
	return t != nil && t.OnUnknown == OnUnknownResend
}

// onUnknown checks a tool's on_unknown policy.
func (v *validator) onUnknown(row string, t *Tool) {
	p := v.p
	switch {
	case !t.OnUnknown.Valid():
		p.add(row, "on_unknown", "want hold or resend, got %q", t.OnUnknown)
	case t.OnUnknown != OnUnknownResend:
	case t.Effect == maestrotype.EffectMoney:
		p.add(row, "on_unknown", "money whose outcome is unknown is settled by a human, never sent again: use hold")
	case t.Reversibility == maestrotype.ReversibilityCompensable:
		p.add(row, "on_unknown", "a compensable effect sent twice would need undoing twice: use hold")
	case t.Delivery != maestrotype.DeliveryRealSync:
		p.add(row, "on_unknown", "only a real-sync tool's call can be sent again, and %s is %s: use hold", t.Name, t.Delivery)
	}
}
