package connectors

// Part is one provider effect of a composite connector: its own call, with
// its own idempotency key, recorded as its own exactly-once effect.
type Part struct {
	// Name is the part's name in the catalog's wording (.Parts.sms).
	Name string
	Call Call
}

// Composite is a connector that performs several provider effects, such as
// a page by text and by email. The caller claims, sends, settles and
// reconciles each part on its own (ADR 14), so one part's outage never
// resends or hides another.
type Composite interface {
	Parts(call Call) []Part
}

// PartKey is the operation key of one part of a composite effect.
func PartKey(operationKey, part string) string {
	return operationKey + "#" + part
}

// Parts splits call into its parts when its kind's connector is composite.
func (s Set) Parts(call Call) ([]Part, bool) {
	c, ok := s[call.Kind].(Composite)
	if !ok {
		return nil, false
	}
	return c.Parts(call), true
}
