package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
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

// scheduleSweep makes sure the sweep that finishes stranded invocations is
// scheduled on Temporal, every interval. Like the audit, the schedule is
// created once per namespace and task queue.
func scheduleSweep(ctx context.Context, c client.Client, taskQueue string, every time.Duration) error {
	return scheduleEvery(ctx, c, SweepScheduleID(taskQueue), workflows.SweepWorkflowID+"/"+taskQueue,
		workflows.SweepWorkflowName, taskQueue, every, "the sweep")
}

// scheduleEvery makes sure a workflow runs on Temporal every interval,
// under one schedule per namespace and task queue; a run that would
// overlap the one before it is skipped, having nothing to add.
func scheduleEvery(ctx context.Context, c client.Client, id, workflowID, workflowName, taskQueue string, every time.Duration, what string) error {
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:   id,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}},
		Action: &client.ScheduleWorkflowAction{
			ID:        workflowID,
			Workflow:  workflowName,
			TaskQueue: taskQueue,
		},
		Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP,
	})
	if err != nil && !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("error scheduling %s: %w", what, err)
	}
	return nil
}

// SweepScheduleID names the sweep's schedule for a task queue, so an
// operator (or a test) can trigger a sweep now.
func SweepScheduleID(taskQueue string) string {
	return workflows.SweepScheduleID + "/" + taskQueue
}
