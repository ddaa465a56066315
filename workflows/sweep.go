package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// SweepWorkflow runs one sweep. A Temporal schedule starts it every few
// minutes; see the Sweep activity for what it finishes.
func SweepWorkflow(ctx workflow.Context) (SweepResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         ActivityRetry,
	})
	var res SweepResult
	err := workflow.ExecuteActivity(ctx, ActivitySweep).Get(ctx, &res)
	return res, err
}
