package maestrotype

// Effect is who pays when a call goes wrong, assigned by the owner of the
// downstream system. It decides the route together with Reversibility.
type Effect string

const (
	EffectRead  Effect = "read"
	EffectWrite Effect = "write"
	EffectMoney Effect = "money"
)

// Valid reports whether e is one of the known effects.
func (e Effect) Valid() bool {
	switch e {
	case EffectRead, EffectWrite, EffectMoney:
		return true
	}
	return false
}

// Delivery says when the side effect happens relative to the agent's turn.
type Delivery string

const (
	// DeliveryReadonly tools have no side effect.
	DeliveryReadonly Delivery = "readonly"
	// DeliveryRealSync tools perform the effect now and return a receipt.
	DeliveryRealSync Delivery = "real-sync"
	// DeliveryRecordDeferred tools only record intent; the post-call
	// workflow performs the delivery later.
	DeliveryRecordDeferred Delivery = "record-deferred"
)

// Valid reports whether d is one of the known delivery modes.
func (d Delivery) Valid() bool {
	switch d {
	case DeliveryReadonly, DeliveryRealSync, DeliveryRecordDeferred:
		return true
	}
	return false
}

// Reversibility tells the router whether an effect can be undone by a
// compensation tool. Reads declare "none".
type Reversibility string

const (
	ReversibilityNone         Reversibility = "none"
	ReversibilityCompensable  Reversibility = "compensable"
	ReversibilityIrreversible Reversibility = "irreversible"
)

// Valid reports whether r is one of the known reversibility values.
func (r Reversibility) Valid() bool {
	switch r {
	case ReversibilityNone, ReversibilityCompensable, ReversibilityIrreversible:
		return true
	}
	return false
}

// Route is the path a call takes, computed from the catalog row and the
// arguments, never from a tool name matched in model output.
type Route string

const (
	// RouteRead validates, executes and returns; it never pauses.
	RouteRead Route = "read"
	// RouteWrite executes now and logs before/after state with the receipt.
	RouteWrite Route = "write"
	// RouteCompensable persists the effect-log entry and the undo entry
	// before executing.
	RouteCompensable Route = "compensable"
	// RouteGated freezes the arguments and waits for an approver.
	RouteGated Route = "gated"
	// RouteDeferred records intent for the post-call workflow.
	RouteDeferred Route = "deferred"
)
