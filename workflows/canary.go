package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// CanaryRun is what one canary run found: how many tools it fired and how
// many the providers confirmed. The per-tool results are in the ledger
// under RunID.
type CanaryRun struct {
	RunID  string
	Tools  int
	Passed int
}

// CanaryWorkflow runs the reality canary once. A Temporal schedule starts
// it (daily by default), and an operator may start it now. The run is
// named by the workflow's run ID, so a retried activity records under the
// same one.
func CanaryWorkflow(ctx workflow.Context) (CanaryRun, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		// Each attempt fires every canary again at the test facilities,
		// whose effects cost nothing; a run that keeps failing to record
		// is left for the next one.
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var res CanaryRun
	err := workflow.ExecuteActivity(ctx, ActivityCanary, workflow.GetInfo(ctx).WorkflowExecution.RunID).Get(ctx, &res)
	return res, err
}
