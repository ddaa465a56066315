package bench

import (
	"context"
	"fmt"
	"time"
)

// direct calls the connector in-process: no ledger, no workflow, nothing
// that survives a crash. It is the floor every durable path is held to.
func (s *stack) direct(o op) scenario {
	return scenario{
		path:     pathDirect,
		op:       o,
		measures: "provider call",
		do: func(ctx context.Context, c call) (sample, error) {
			cc, err := o.connectorCall(s.catalog, c.key, c.session)
			if err != nil {
				return sample{}, err
			}
			start := time.Now()
			res, err := s.conns.Do(ctx, cc)
			elapsed := time.Since(start)
			if err != nil {
				return sample{}, fmt.Errorf("error calling %s directly: %w", o.tool, err)
			}
			return sample{latency: elapsed}, checkResult(o, res)
		},
	}
}
