package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// maestro makes the call through maestro's HTTP API as an agent does, and
// times the request until the final observation comes back.
func (s *stack) maestro(o op) scenario {
	return scenario{
		path:     pathMaestro,
		op:       o,
		measures: "request → receipt",
		do: func(ctx context.Context, c call) (sample, error) {
			start := time.Now()
			resp, err := s.agent.Invoke(ctx, invokeRequest(o, c))
			if err == nil && resp.Pending {
				// The API stopped waiting (a loaded machine can outlast
				// its wait timeout); follow the call to its end, as an
				// agent polling would, without rounding up to the poll
				// interval.
				resp, err = s.awaitFinal(ctx, c.key, resp.InvocationID)
			}
			elapsed := time.Since(start)
			if err != nil {
				return sample{}, fmt.Errorf("error invoking %s: %w", o.tool, err)
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

// awaitFinal waits for an invocation's workflow to complete, as maestro's
// API does, then reads the invocation through the API: the ledger is what
// the agent is told.
func (s *stack) awaitFinal(ctx context.Context, key, invocationID string) (apiclient.Response, error) {
	wf := workflows.InvocationWorkflowID(key)
	if err := s.temporal.GetWorkflow(ctx, wf, "").Get(ctx, nil); err != nil {
		return apiclient.Response{}, fmt.Errorf("error waiting for %s: %w", wf, err)
	}
	resp, err := s.agent.Invocation(ctx, invocationID)
	if err != nil {
		return apiclient.Response{}, fmt.Errorf("error reading %s: %w", invocationID, err)
	}
	return resp, nil
}

func invokeRequest(o op, c call) apitype.InvokeRequest {
	return apitype.InvokeRequest{
		SessionID:      c.session,
		Tool:           o.tool,
		Args:           o.args,
		OperationKey:   c.key,
		SessionContext: sessionFacts,
	}
}

// succeeded checks an answer is final and, for a write, carries the
// provider's receipt.
func succeeded(o op, resp apiclient.Response) error {
	if resp.Pending || resp.State != mt.InvocationSucceeded {
		return fmt.Errorf("%s %s ended %s: %s", o.tool, resp.InvocationID, resp.State, resp.Observation.Summary)
	}
	if o.name != "read" && resp.Observation.Receipt == nil {
		return fmt.Errorf("%s %s succeeded without a receipt", o.tool, resp.InvocationID)
	}
	return nil
}
