package maestrotype

// InvocationState is the lifecycle of one tool invocation.
type InvocationState string

const (
	InvocationRunning             InvocationState = "running"
	InvocationAwaitingApproval    InvocationState = "awaiting_approval"
	InvocationSucceeded           InvocationState = "succeeded"
	InvocationFailed              InvocationState = "failed"
	InvocationRecorded            InvocationState = "recorded"
	InvocationRejected            InvocationState = "rejected"
	InvocationTimedOut            InvocationState = "timed_out"
	InvocationNeedsReconciliation InvocationState = "needs_reconciliation"
)

// Terminal reports whether no further transition is expected.
func (s InvocationState) Terminal() bool {
	switch s {
	case InvocationRunning, InvocationAwaitingApproval:
		return false
	}
	return true
}

// EffectStatus is the idempotency ledger's status for one operation key.
type EffectStatus string

const (
	// EffectInProgress means a worker holds the lease and may be talking to
	// the provider.
	EffectInProgress EffectStatus = "in_progress"
	EffectSucceeded  EffectStatus = "succeeded"
	// EffectFailed means the provider definitively refused; nothing happened.
	EffectFailed EffectStatus = "failed"
	// EffectNeedsReconciliation means the outcome is unknown: the provider
	// may or may not have performed the effect.
	EffectNeedsReconciliation EffectStatus = "needs_reconciliation"
)
