package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/maestro-run/maestro/internal/pgwire"
)

// callTimeout bounds one call, so a stuck call fails its cell rather
// than hanging the run.
const callTimeout = time.Minute

// maxWarmup bounds a cell's warm-up calls: enough to open connections and
// fill caches, without spending the run's time budget on calls it discards.
const maxWarmup = 8

// cell is one scenario run at one concurrency.
type cell struct {
	scenario    scenario
	concurrency int
	calls       int
	// perSession is how many calls a caller makes in one session.
	perSession int
	// prefix makes the cell's operation keys and sessions unique.
	prefix string
}

// result is what a cell measured.
type result struct {
	scenario    string
	path        string
	op          string
	tool        string
	measures    string
	concurrency int
	calls       int
	// failed counts calls that returned an error; err is the first.
	failed int
	err    error
	stats  stats
	// split is where the time of a call run by a workflow went.
	split split
	// events is the mean number of history events of the workflow that ran
	// each call: 0 for a direct call.
	events float64
	// sessionEvents is the session workflow's events divided by the calls
	// recorded in it; -1 when the path has no session.
	sessionEvents float64
	// history and sessionHistory are the event types of one call's
	// workflow and one session's, for the record.
	history        []string
	sessionHistory []string
	// ledger is the ledger work per call, when it was counted.
	ledger ledgerPerCall
}

// run warms the cell up with a few unrecorded calls, then makes the
// measured calls, then reads their workflows' histories. With a meter, it
// counts the ledger's work from the first measured call until the
// histories are read, by when every session the calls touched has settled.
func (c cell) run(ctx context.Context, h historyReader, meter func() pgwire.Counts) (result, error) {
	sc := c.scenario
	warm := plan(c.prefix+"-warm", min(c.concurrency, maxWarmup), c.concurrency, c.perSession)
	measured := plan(c.prefix, c.calls, c.concurrency, c.perSession)
	var opening []call
	if sc.path == pathMaestro {
		opening = openers(c.prefix, c.concurrency, c.perSession)
	}
	if sc.prepare != nil {
		if err := runUnmeasured(ctx, slices.Concat(warm, opening, measured), c.concurrency, prepareOnly(sc.prepare)); err != nil {
			return result{}, fmt.Errorf("error preparing %s: %w", sc.name(), err)
		}
	}
	if err := runUnmeasured(ctx, append(warm, opening...), c.concurrency, sc.do); err != nil {
		return result{}, fmt.Errorf("error warming up %s: %w", sc.name(), err)
	}

	var before pgwire.Counts
	if meter != nil {
		before = meter()
	}
	start := time.Now()
	samples, errs := runCalls(ctx, measured, c.concurrency, sc.do)
	elapsed := time.Since(start)

	r := result{
		scenario: sc.name(), path: sc.path, op: sc.op.name, tool: sc.op.tool, measures: sc.measures,
		concurrency: c.concurrency, calls: c.calls, sessionEvents: -1,
	}
	var kept []sample
	for i, err := range errs {
		if err != nil {
			r.failed++
			if r.err == nil {
				r.err = err
			}
			continue
		}
		kept = append(kept, samples[i])
	}
	r.stats = summarize(kept, elapsed)
	if err := r.readHistories(ctx, h, kept, len(opening)); err != nil {
		return result{}, err
	}
	if meter != nil {
		r.ledger = perCall(meter().Minus(before), c.calls)
	}
	return r, nil
}

// readHistories fills in what the calls' workflows and sessions recorded.
// The sessions also hold the opened calls made before the measured ones,
// so their events are shared among both.
func (r *result) readHistories(ctx context.Context, h historyReader, samples []sample, opened int) error {
	if len(samples) == 0 || samples[0].workflowID == "" {
		return nil
	}
	ids := make([]string, len(samples))
	for i, s := range samples {
		ids[i] = s.workflowID
	}
	runs, err := h.readAll(ctx, ids, h.closed)
	if err != nil {
		return err
	}
	r.events = meanEvents(runs, len(samples))
	r.history = runs[0].types
	r.split = splitTime(samples, runs)

	sessions := map[string]bool{}
	for _, s := range samples {
		if s.sessionWorkflowID != "" {
			sessions[s.sessionWorkflowID] = true
		}
	}
	if len(sessions) == 0 {
		return nil
	}
	ids = slices.Sorted(maps.Keys(sessions))
	// Sessions run on after their calls; wait for each to take in the last
	// signal so its history holds every event the calls caused.
	runs, err = h.readAll(ctx, ids, h.settle)
	if err != nil {
		return err
	}
	r.sessionEvents = meanEvents(runs, len(samples)+opened)
	r.sessionHistory = runs[0].types
	return nil
}

func meanEvents(hs []history, calls int) float64 {
	total := 0
	for _, h := range hs {
		total += len(h.types)
	}
	return float64(total) / float64(calls)
}

// plan lays n calls out over the callers: caller w makes calls w, w+c,
// w+2c…, and every perSession of them share a session, like an agent
// making a few tool calls per phone call. Caller w joins its first phone
// call w%perSession calls in (openers made the calls before), so however
// few calls each caller makes, one in perSession of them opens a session,
// as in a fleet whose calls began at different times.
func plan(prefix string, n, concurrency, perSession int) []call {
	calls := make([]call, n)
	for i := range calls {
		caller := i % concurrency
		nth := i/concurrency + caller%perSession
		calls[i] = call{
			caller:  caller,
			key:     fmt.Sprintf("%s-%d", prefix, i),
			session: sessionOf(prefix, caller, nth/perSession),
		}
	}
	return calls
}

// openers are the calls that open the first session of each caller plan
// has join its session partway: one each, made before the measured calls.
func openers(prefix string, concurrency, perSession int) []call {
	var calls []call
	for caller := range concurrency {
		if caller%perSession == 0 {
			continue
		}
		calls = append(calls, call{
			caller:  len(calls),
			key:     fmt.Sprintf("%s-open-%d", prefix, caller),
			session: sessionOf(prefix, caller, 0),
		})
	}
	return calls
}

func sessionOf(prefix string, caller, nth int) string {
	return fmt.Sprintf("%s-w%d-s%d", prefix, caller, nth)
}

// runCalls makes calls with one goroutine per caller, each making its own
// calls in order, and returns each call's sample and error by index.
func runCalls(ctx context.Context, calls []call, concurrency int, do func(context.Context, call) (sample, error)) ([]sample, []error) {
	samples := make([]sample, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for w := range concurrency {
		wg.Go(func() {
			for i := w; i < len(calls); i += concurrency {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				callCtx, cancel := context.WithTimeout(ctx, callTimeout)
				samples[i], errs[i] = do(callCtx, calls[i])
				cancel()
			}
		})
	}
	wg.Wait()
	return samples, errs
}

func prepareOnly(prepare func(context.Context, call) error) func(context.Context, call) (sample, error) {
	return func(ctx context.Context, c call) (sample, error) { return sample{}, prepare(ctx, c) }
}

// runUnmeasured makes calls whose timings are not kept and returns the
// first error.
func runUnmeasured(ctx context.Context, calls []call, concurrency int, do func(context.Context, call) (sample, error)) error {
	_, errs := runCalls(ctx, calls, concurrency, do)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
