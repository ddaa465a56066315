package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// AuditWorkflow runs one audit scan. A Temporal schedule starts it daily;
// the scan's findings are logged and served by GET /v1/audit.
func AuditWorkflow(ctx workflow.Context) (AuditResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         ActivityRetry,
	})
	var res AuditResult
	err := workflow.ExecuteActivity(ctx, ActivityAuditScan).Get(ctx, &res)
	return res, err
}
