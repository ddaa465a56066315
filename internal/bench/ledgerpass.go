package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/maestro-run/maestro/internal/outbox"
	"github.com/maestro-run/maestro/internal/pgwire"
	"github.com/maestro-run/maestro/workflows"
)

// ownLedgerCalls is how many calls of each route the ledger pass counts
// one at a time; their median is the route's own work per call, so one
// call that meets a timed loop's write does not decide it.
const ownLedgerCalls = 5

// ownLedgerQuiet bounds the wait for the outbox to deliver what a counted
// call queued.
const ownLedgerQuiet = 10 * time.Second

// ledgerPass counts each maestro route's own ledger work per call, which
// the goal rows judge: calls one at a time in a session already open, each
// counted from its request (an approval's, from the decision) until its
// answer is back, its workflow has closed and the outbox owes nothing. The
// cells' counts also hold what the fleet's ledger does beside the calls:
// opening each session, and recording Twilio's delivery reports, which the
// stand-in withholds during the pass.
func (s *stack) ledgerPass(ctx context.Context, scenarios []scenario, meter func() pgwire.Counts, runID string) (map[string]ledgerPerCall, error) {
	twilio := s.daemon.Standins().Twilio
	twilio.PauseStatusCallbacks(true)
	defer twilio.PauseStatusCallbacks(false)
	out := map[string]ledgerPerCall{}
	for _, sc := range scenarios {
		if sc.path != pathMaestro {
			continue
		}
		prefix := fmt.Sprintf("bench-%s.%s.own", runID, sc.slug())
		calls := plan(prefix, ownLedgerCalls+1, 1, ownLedgerCalls+1)
		if sc.prepare != nil {
			if err := runUnmeasured(ctx, calls, 1, prepareOnly(sc.prepare)); err != nil {
				return nil, fmt.Errorf("error preparing %s's ledger pass: %w", sc.name(), err)
			}
		}
		// The first call opens the session and is not counted.
		if err := runUnmeasured(ctx, calls[:1], 1, sc.do); err != nil {
			return nil, fmt.Errorf("error opening %s's ledger pass: %w", sc.name(), err)
		}
		var counts []pgwire.Counts
		for _, c := range calls[1:] {
			before := meter()
			if err := s.countedCall(ctx, sc, c); err != nil {
				return nil, fmt.Errorf("error in %s's ledger pass: %w", sc.name(), err)
			}
			counts = append(counts, meter().Minus(before))
		}
		out[sc.op.name] = medianPerCall(counts)
	}
	return out, nil
}

// countedCall makes one call and waits until the ledger owes it nothing.
func (s *stack) countedCall(ctx context.Context, sc scenario, c call) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := sc.do(ctx, c); err != nil {
		return err
	}
	if err := s.temporal.GetWorkflow(ctx, workflows.InvocationWorkflowID(c.key), "").Get(ctx, nil); err != nil {
		return fmt.Errorf("error waiting for %s's workflow: %w", c.key, err)
	}
	if err := outbox.AwaitDrained(ctx, s.uncounted, ownLedgerQuiet); err != nil {
		return fmt.Errorf("error waiting for %s's signals: %w", c.key, err)
	}
	return nil
}

// medianPerCall is the median of each count over the calls.
func medianPerCall(counts []pgwire.Counts) ledgerPerCall {
	pick := func(f func(pgwire.Counts) int64) float64 {
		xs := make([]int64, len(counts))
		for i, c := range counts {
			xs[i] = f(c)
		}
		slices.Sort(xs)
		return float64(xs[len(xs)/2])
	}
	return ledgerPerCall{
		counted:      true,
		roundTrips:   pick(func(c pgwire.Counts) int64 { return c.RoundTrips - c.Prepares }),
		statements:   pick(func(c pgwire.Counts) int64 { return c.Statements }),
		transactions: pick(func(c pgwire.Counts) int64 { return c.Transactions }),
	}
}
