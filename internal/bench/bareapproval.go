package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/maestro-run/maestro/internal/connectors"
)

// bareApprovalTimeout outlasts any run, so the timer only adds the events
// maestro's approval deadline costs and never fires.
const bareApprovalTimeout = time.Hour

// bareSignalWorkflow parks until a decision signal arrives, then runs the
// provider call as a regular activity: maestro's gated invocation with
// everything but maestro taken out. The timer stands in for maestro's
// approval deadline, which is a Temporal timer too.
func bareSignalWorkflow(ctx workflow.Context, call connectors.Call) (connectors.Result, error) {
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(timerCtx, bareApprovalTimeout)
	decided := false
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, bareDecisionSignal), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		decided = true
	})
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.Select(ctx)
	cancelTimer()
	if !decided {
		return connectors.Result{}, errors.New("no decision arrived before the deadline")
	}
	var res connectors.Result
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, bareActivityOptions), bareActivityName, call).Get(ctx, &res)
	return res, err
}

// bareApproval is maestro/approval's baseline: the workflow starts eagerly
// as maestro's does and parks before the clock starts; the clock runs from
// the decision signal to the workflow's result.
func (s *stack) bareApproval(o op) scenario {
	return scenario{
		path:     pathSignal,
		op:       o,
		measures: "signal → result",
		prepare: func(ctx context.Context, c call) error {
			cc, err := o.connectorCall(s.catalog, c.key, c.session)
			if err != nil {
				return err
			}
			opts := client.StartWorkflowOptions{ID: bareSignalID(c.key), TaskQueue: bareTaskQueue, EnableEagerStart: true}
			if _, err := s.temporal.ExecuteWorkflow(ctx, opts, bareSignalWorkflowName, cc); err != nil {
				return fmt.Errorf("error starting a bare %s workflow: %w", o.tool, err)
			}
			return nil
		},
		do: func(ctx context.Context, c call) (sample, error) {
			id := bareSignalID(c.key)
			start := time.Now()
			if err := s.temporal.SignalWorkflow(ctx, id, "", bareDecisionSignal, "approved"); err != nil {
				return sample{}, fmt.Errorf("error signalling %s: %w", id, err)
			}
			var res connectors.Result
			err := s.temporal.GetWorkflow(ctx, id, "").Get(ctx, &res)
			elapsed := time.Since(start)
			if err != nil {
				return sample{}, fmt.Errorf("error waiting for %s: %w", id, err)
			}
			return sample{latency: elapsed, workflowID: id}, checkResult(o, res)
		},
	}
}

func bareSignalID(key string) string { return "bench/" + key }
