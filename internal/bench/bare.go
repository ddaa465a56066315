package bench

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/workflows"
)

// The bare workflows run on their own task queue of maestro's Temporal
// server, under names that cannot collide with maestro's.
const (
	bareTaskQueue          = "maestro-bench"
	bareWorkflowName       = "BenchCall"
	bareLocalWorkflowName  = "BenchCallLocal"
	bareUpdateWorkflowName = "BenchCallUpdate"
	bareSignalWorkflowName = "BenchCallOnSignal"
	bareActivityName       = "BenchConnect"
	bareResultUpdate       = "result"
	bareDecisionSignal     = "decided"
)

// bareVariant is one way of running the bare workflow. The first is the
// floor; the others each add the Temporal features maestro uses or could
// adopt, and matchedBaseline picks the one each route is held to.
type bareVariant struct {
	path     string
	workflow string
	// eager asks the server to hand the first workflow task back in the
	// start response, skipping a trip through matching.
	eager bool
	// update starts the workflow and waits for its result in one request
	// (update-with-start) instead of start, then a long poll.
	update bool
}

var bareVariants = []bareVariant{
	{path: pathTemporal, workflow: bareWorkflowName},
	{path: pathEager, workflow: bareWorkflowName, eager: true},
	{path: pathLocal, workflow: bareLocalWorkflowName},
	{path: pathEagerLocal, workflow: bareLocalWorkflowName, eager: true},
	{path: pathUpdate, workflow: bareUpdateWorkflowName, update: true},
}

// bareActivityOptions are maestro's, so the bare floor runs the activity
// under the same timeout and retry policy.
var bareActivityOptions = workflow.ActivityOptions{
	StartToCloseTimeout: workflows.ActivityTimeout,
	RetryPolicy:         workflows.ActivityRetry,
}

func registerBare(w worker.Registry, conns connectors.Set) {
	w.RegisterActivityWithOptions(conns.Do, activity.RegisterOptions{Name: bareActivityName})
	w.RegisterWorkflowWithOptions(bareWorkflow, workflow.RegisterOptions{Name: bareWorkflowName})
	w.RegisterWorkflowWithOptions(bareLocalWorkflow, workflow.RegisterOptions{Name: bareLocalWorkflowName})
	w.RegisterWorkflowWithOptions(bareUpdateWorkflow, workflow.RegisterOptions{Name: bareUpdateWorkflowName})
	w.RegisterWorkflowWithOptions(bareSignalWorkflow, workflow.RegisterOptions{Name: bareSignalWorkflowName})
}

// bareWorkflow runs the provider call as one activity: the least a durable
// tool call can cost on Temporal.
func bareWorkflow(ctx workflow.Context, call connectors.Call) (connectors.Result, error) {
	var res connectors.Result
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, bareActivityOptions), bareActivityName, call).Get(ctx, &res)
	return res, err
}

// bareLocalWorkflow runs the call as a local activity, in the workflow
// task itself: one marker event instead of three activity events and a
// second workflow task.
func bareLocalWorkflow(ctx workflow.Context, call connectors.Call) (connectors.Result, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: workflows.ActivityTimeout,
		RetryPolicy:         workflows.ActivityRetry,
	})
	var res connectors.Result
	err := workflow.ExecuteLocalActivity(ctx, bareActivityName, call).Get(ctx, &res)
	return res, err
}

// bareUpdateWorkflow answers its result through an update, so a caller
// can start it and wait in one request.
func bareUpdateWorkflow(ctx workflow.Context, call connectors.Call) (connectors.Result, error) {
	var res connectors.Result
	var callErr error
	done := false
	err := workflow.SetUpdateHandler(ctx, bareResultUpdate, func(ctx workflow.Context) (connectors.Result, error) {
		if err := workflow.Await(ctx, func() bool { return done }); err != nil {
			return connectors.Result{}, err
		}
		return res, callErr
	})
	if err != nil {
		return connectors.Result{}, fmt.Errorf("error registering the result update: %w", err)
	}
	callErr = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, bareActivityOptions), bareActivityName, call).Get(ctx, &res)
	done = true
	// Completing the run first would leave the update unanswered.
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return connectors.Result{}, err
	}
	return res, callErr
}

// bare starts a bare workflow per call and waits for its result, as
// maestro's API does for its own.
func (s *stack) bare(o op, v bareVariant) scenario {
	return scenario{
		path:     v.path,
		op:       o,
		measures: "start → result",
		do: func(ctx context.Context, c call) (sample, error) {
			cc, err := o.connectorCall(s.catalog, c.key, c.session)
			if err != nil {
				return sample{}, err
			}
			opts := client.StartWorkflowOptions{ID: "bench/" + c.key, TaskQueue: bareTaskQueue, EnableEagerStart: v.eager}
			start := time.Now()
			res, err := s.runBare(ctx, v, opts, cc)
			elapsed := time.Since(start)
			if err != nil {
				return sample{}, fmt.Errorf("error running %s in a bare workflow: %w", o.tool, err)
			}
			return sample{latency: elapsed, workflowID: opts.ID}, checkResult(o, res)
		},
	}
}

func (s *stack) runBare(ctx context.Context, v bareVariant, opts client.StartWorkflowOptions, cc connectors.Call) (connectors.Result, error) {
	var res connectors.Result
	if v.update {
		// Update-with-start requires a conflict policy.
		opts.WorkflowIDConflictPolicy = enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
		h, err := s.temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: s.temporal.NewWithStartWorkflowOperation(opts, v.workflow, cc),
			UpdateOptions:          client.UpdateWorkflowOptions{UpdateName: bareResultUpdate, WaitForStage: client.WorkflowUpdateStageCompleted},
		})
		if err != nil {
			return res, err
		}
		return res, h.Get(ctx, &res)
	}
	run, err := s.temporal.ExecuteWorkflow(ctx, opts, v.workflow, cc)
	if err != nil {
		return res, err
	}
	return res, run.Get(ctx, &res)
}
