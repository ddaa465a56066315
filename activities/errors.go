package activities

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// Error types for application errors returned to the workflow.
const (
	ErrTypeProviderRetry = "ProviderRetry"
	ErrTypeLeaseBusy     = "LeaseBusy"
	ErrTypeLedger        = "Ledger"
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
