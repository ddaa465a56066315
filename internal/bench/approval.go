package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/maestro-run/maestro/workflows"
)

// held is a gated call waiting at the approval gate.
type held struct {
	invocationID string
	approvalID   string
}

// approval measures the round trip after a human decides: an operator
// approves a refund the agent asked for, and the clock stops when the
// agent can read the provider's receipt. The agent's request, which only
// opens the approval, happens before the clock starts.
func (s *stack) approval(o op) scenario {
	var pending sync.Map // operation key → held
	return scenario{
		path:     pathMaestro,
		op:       o,
		measures: "approval → receipt",
		prepare: func(ctx context.Context, c call) error {
			resp, err := s.agent.Invoke(ctx, invokeRequest(o, c))
			if err != nil {
				return fmt.Errorf("error invoking %s: %w", o.tool, err)
			}
			if !resp.Pending || resp.ApprovalID == "" {
				return fmt.Errorf("%s %s was not held for approval (state %s)", o.tool, resp.InvocationID, resp.State)
			}
			pending.Store(c.key, held{invocationID: resp.InvocationID, approvalID: resp.ApprovalID})
			return nil
		},
		do: func(ctx context.Context, c call) (sample, error) {
			v, ok := pending.LoadAndDelete(c.key)
			if !ok {
				return sample{}, fmt.Errorf("no approval was opened for %s", c.key)
			}
			h := v.(held)
			start := time.Now()
			if _, err := s.ops.Approve(ctx, h.approvalID, "benchmark"); err != nil {
				return sample{}, fmt.Errorf("error approving %s: %w", h.approvalID, err)
			}
			// A long poll on the workflow ends the moment it completes,
			// where polling the API would round up to the poll interval.
			resp, err := s.awaitFinal(ctx, c.key, h.invocationID)
			elapsed := time.Since(start)
			if err != nil {
				return sample{}, err
			}
			if err := succeeded(o, resp); err != nil {
				return sample{}, err
			}
			return sample{
				latency:           elapsed,
				workflowID:        workflows.InvocationWorkflowID(c.key),
				sessionWorkflowID: workflows.SessionWorkflowID(c.session),
			}, nil
		},
	}
}
