package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/maestro-run/maestro/workflows"
)

// scheduleAudit makes sure the daily audit scan is scheduled on Temporal.
// The schedule is created once per namespace and task queue; starting a
// second worker finds it already there.
func scheduleAudit(ctx context.Context, c client.Client, taskQueue string) error {
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:   workflows.AuditScheduleID + "/" + taskQueue,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 24 * time.Hour}}},
		Action: &client.ScheduleWorkflowAction{
			ID:        workflows.AuditScanWorkflowID + "/" + taskQueue,
			Workflow:  workflows.AuditWorkflowName,
			TaskQueue: taskQueue,
		},
	})
	if err != nil && !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("error scheduling the daily audit scan: %w", err)
	}
	return nil
}
