package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/maestro-run/maestro/workflows"
)

// scheduleAudit makes sure the daily audit scan is scheduled on Temporal.
// The schedule is created once per namespace and task queue; starting a
// second worker finds it already there.
func scheduleAudit(ctx context.Context, c client.Client, taskQueue string) error {
	return scheduleEvery(ctx, c, AuditScheduleID(taskQueue), workflows.AuditScanWorkflowID+"/"+taskQueue,
		workflows.AuditWorkflowName, taskQueue, 24*time.Hour, "the daily audit scan")
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
	return createSchedule(ctx, c, client.ScheduleOptions{
		ID:   id,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}},
		Action: &client.ScheduleWorkflowAction{
			ID:        workflowID,
			Workflow:  workflowName,
			TaskQueue: taskQueue,
		},
		Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP,
	}, what)
}

// scheduleAttempts bounds how often creating a schedule is tried when
// Temporal does not answer in time.
const scheduleAttempts = 5

// createSchedule creates a schedule unless it already exists. A busy
// Temporal may let one RPC's deadline pass; creating is idempotent (a
// schedule that was made after all is found already there), so it is
// asked again rather than failing the start of the process.
func createSchedule(ctx context.Context, c client.Client, opts client.ScheduleOptions, what string) error {
	var err error
	for attempt := 1; attempt <= scheduleAttempts; attempt++ {
		_, err = c.ScheduleClient().Create(ctx, opts)
		if err == nil || errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			return nil
		}
		if !transientRPC(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		}
	}
	return fmt.Errorf("error scheduling %s: %w", what, err)
}

// transientRPC reports whether a Temporal call failed for want of time or
// of a reachable frontend, so that asking again may succeed.
func transientRPC(err error) bool {
	var unavailable *serviceerror.Unavailable
	var deadline *serviceerror.DeadlineExceeded
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &unavailable) || errors.As(err, &deadline)
}

// AuditScheduleID names the daily audit scan's schedule for a task queue.
func AuditScheduleID(taskQueue string) string {
	return workflows.AuditScheduleID + "/" + taskQueue
}

// SweepScheduleID names the sweep's schedule for a task queue, so an
// operator (or a test) can trigger a sweep now.
func SweepScheduleID(taskQueue string) string {
	return workflows.SweepScheduleID + "/" + taskQueue
}
