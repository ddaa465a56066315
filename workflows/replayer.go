package workflows

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register registers every maestro workflow under the name the rest of the
// code starts it by.
func Register(r worker.WorkflowRegistry) {
	for name, fn := range map[string]any{
		InvocationWorkflowName: InvocationWorkflow,
		SessionWorkflowName:    SessionWorkflow,
		PostCallWorkflowName:   PostCallWorkflow,
		AuditWorkflowName:      AuditWorkflow,
		SweepWorkflowName:      SweepWorkflow,
	} {
		r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name})
	}
}

// NewReplayer returns a replayer for checking recorded histories against
// the current workflow code.
func NewReplayer() worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	Register(r)
	return r
}
