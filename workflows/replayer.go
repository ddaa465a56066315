package workflows

import (
	"fmt"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register registers every maestro workflow under the name the rest of the
// code starts it by.
func Register(r worker.WorkflowRegistry) {
	for name, fn := range map[string]any{
		InvocationWorkflowName:    InvocationWorkflow,
		NotifyWorkflowName:        NotifyWorkflow,
		SessionWorkflowName:       SessionWorkflow,
		PostCallWorkflowName:      PostCallWorkflow,
		PostCallRetryWorkflowName: PostCallRetryWorkflow,
		AuditWorkflowName:         AuditWorkflow,
		SweepWorkflowName:         SweepWorkflow,
		CanaryWorkflowName:        CanaryWorkflow,
	} {
		r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name})
	}
}

// NewReplayer returns a replayer for checking recorded histories against
// the current workflow code, reading payloads with dc and failures with
// fc as the workers that wrote them did: with maestro's codec, both
// encrypted histories and those written before encryption replay.
func NewReplayer(dc converter.DataConverter, fc converter.FailureConverter) (worker.WorkflowReplayer, error) {
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{DataConverter: dc, FailureConverter: fc})
	if err != nil {
		return nil, fmt.Errorf("error creating workflow replayer: %w", err)
	}
	Register(r)
	return r, nil
}
