package tools

import "github.com/maestro-run/maestro/maestrotype"

// Route returns the path a call to the tool takes. It is a function of the
// row alone, never of a tool name matched in model output.
//
// It fails closed: a row is gated unless its classification proves a
// cheaper route safe, so a tool that slipped past the loader unclassified
// or inconsistent waits for a human instead of running. The loader refuses
// such rows, so RouteWrite is never chosen for a valid catalog: every
// write there is either compensable or irreversible.
func (t *Tool) Route() maestrotype.Route {
	switch {
	case t.Effect == maestrotype.EffectRead &&
		t.Delivery == maestrotype.DeliveryReadonly:
		return maestrotype.RouteRead
	case t.Effect == maestrotype.EffectMoney:
		// Money always needs a human, however it is delivered.
		return maestrotype.RouteGated
	case t.Effect == maestrotype.EffectWrite &&
		t.Delivery == maestrotype.DeliveryRecordDeferred:
		return maestrotype.RouteDeferred
	case t.Effect == maestrotype.EffectWrite &&
		t.Delivery == maestrotype.DeliveryRealSync &&
		t.Reversibility == maestrotype.ReversibilityCompensable:
		return maestrotype.RouteCompensable
	}
	return maestrotype.RouteGated
}
