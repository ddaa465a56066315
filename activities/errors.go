package activities

import (
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// Error types for application errors returned to the workflow.
const (
	ErrTypeProviderRetry = "ProviderRetry"
	ErrTypeLeaseBusy     = "LeaseBusy"
	ErrTypeLedger        = "Ledger"
	// ErrTypeLookAgain: the provider's answer was lost and its records do
	// not settle the outcome yet; the claim is kept for the retry.
	ErrTypeLookAgain = "LookAgain"
)

func activityName(name string) activity.RegisterOptions {
	return activity.RegisterOptions{Name: name}
}

func nonRetryable(errType string, err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), errType, err)
}

func retryable(errType string, err error) error {
	return temporal.NewApplicationErrorWithCause(err.Error(), errType, err)
}

// leaseBusy asks Temporal to retry just after another attempt's lease
// expires, when this attempt can take the key over and reconcile it.
func leaseBusy(expires time.Time) error {
	wait := time.Until(expires) + time.Second
	if wait < time.Second {
		wait = time.Second
	}
	if wait > time.Minute {
		wait = time.Minute
	}
	return temporal.NewApplicationErrorWithOptions("another attempt holds the lease on this operation key", ErrTypeLeaseBusy,
		temporal.ApplicationErrorOptions{NextRetryDelay: wait})
}

// lookAgain asks Temporal to retry once delay has passed, or on the retry
// policy's backoff for a zero delay. The attempt that returns it has handed
// its claim to the retry, which takes it over and reconciles before
// anything is sent.
func lookAgain(why string, delay time.Duration) error {
	return temporal.NewApplicationErrorWithOptions(why, ErrTypeLookAgain,
		temporal.ApplicationErrorOptions{NextRetryDelay: delay})
}
