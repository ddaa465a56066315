//go:build chaos

package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// inject injects one fault, the round-th of its kind, and says what it did.
type inject func(ctx context.Context, round int) (faultEvent, error)

// chaos injects every kind of fault, each on its own lane at its own pace,
// until the calls are done and every kind has reached its minimum.
func (c *cluster) chaos(ctx context.Context, prof profile, sched *schedule, done *atomic.Int64, loadDone <-chan struct{}) {
	lanes := []struct {
		pace   pace
		inject inject
	}{
		{prof.workerKills, c.killWorkers},
		{prof.apiKills, c.killAPI},
		{prof.pgRestarts, c.restartPostgres},
		{prof.temporalRestarts, c.restartTemporal},
		{prof.providerBursts, c.providerBurst},
	}
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(func() { c.lane(ctx, l.pace, sched, done, prof.sessions*prof.callsPerSession, loadDone, l.inject) })
	}
	wg.Wait()
}

// tailShare is the share of the calls the run leaves to finish without
// new faults, once each kind has been injected its minimum: the last calls
// of a run are few and long (rollbacks, refunds waiting for a decision),
// and a fault every few seconds would keep killing the same one.
const tailShare = 0.1

// lane injects faults of one kind at pace until it has injected pace.min
// and the load is in its tail or done, or ctx ends. A failed injection
// stops the lane and fails the test.
func (c *cluster) lane(ctx context.Context, p pace, sched *schedule, done *atomic.Int64, total int, loadDone <-chan struct{}, f inject) {
	pause := time.NewTimer(jitter(p.every))
	defer pause.Stop()
	inTail := func() bool { return float64(done.Load()) >= (1-tailShare)*float64(total) }
	for count, round := 0, 0; ; round++ {
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				return
			case <-loadDone:
				loadDone = nil // closed for good: one notice is enough
				if count >= p.min {
					return
				}
			case <-pause.C:
				waiting = false
			}
		}
		if count >= p.min && inTail() {
			return
		}
		at, calls := time.Now(), done.Load()
		e, err := f(ctx, round)
		if err != nil {
			c.t.Errorf("%s, round %d: %v", e.Kind, round, err)
			return
		}
		sched.record(at, e)
		c.t.Logf("%s %s after %d calls: %s", e.Kind, e.Target, calls, e.Detail)
		count++
		if e.Kind == kindWorkerKillPair {
			count++
		}
		if count >= p.min && (loadDone == nil || inTail()) {
			return
		}
		pause.Reset(jitter(p.every))
	}
}

// killWorkers SIGKILLs a random worker, or every pairEvery-th round two at
// once, and restarts them.
func (c *cluster) killWorkers(_ context.Context, round int) (faultEvent, error) {
	targets := []int{randomInt(workers)}
	e := faultEvent{Kind: kindWorkerKill, Detail: "SIGKILL, then restarted"}
	if round%pairEvery == 1 {
		targets = append(targets, (targets[0]+1+randomInt(workers-1))%workers)
		e.Kind = kindWorkerKillPair
		e.Detail = "both at once: SIGKILL, then restarted"
	}
	names := make([]string, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for k, i := range targets {
		names[k] = c.workers[i].name
		wg.Go(func() { errs[k] = c.workers[i].restart((*proc).kill) })
	}
	wg.Wait()
	e.Target = strings.Join(names, "+")
	return e, errors.Join(errs...)
}

// busyWait bounds the wait for a request in flight at the API to be killed.
const busyWait = 10 * time.Second

// killAPI SIGKILLs a random API process while it holds requests, which the
// proxy answers 502, and restarts it on its address.
func (c *cluster) killAPI(ctx context.Context, _ int) (faultEvent, error) {
	i := randomInt(apis)
	e := faultEvent{Kind: kindAPIKill, Target: c.apis[i].name}
	for deadline := time.Now().Add(busyWait); c.apiLB.busy(i) == 0 && time.Now().Before(deadline); {
		if err := sleep(ctx, 5*time.Millisecond); err != nil {
			return e, err
		}
	}
	var inFlight int64
	err := c.apis[i].restart(func(p *proc) {
		inFlight = c.apiLB.busy(i)
		p.kill()
	})
	e.Detail = fmt.Sprintf("SIGKILL with %d requests in flight, then restarted", inFlight)
	return e, err
}

// restartPostgres restarts PostgreSQL as its clients see it: every
// connection dropped, new ones refused for one to three seconds.
func (c *cluster) restartPostgres(context.Context, int) (faultEvent, error) {
	outage := time.Second + time.Duration(randomInt(2000))*time.Millisecond
	dropped, err := c.pg.restart(outage)
	return faultEvent{
		Kind: kindPGRestart, Target: "postgresql",
		Detail: fmt.Sprintf("%d connections dropped, new ones refused for %s", dropped, outage),
	}, err
}

// restartTemporal SIGKILLs the Temporal server and starts it again on the
// same port and databases.
func (c *cluster) restartTemporal(context.Context, int) (faultEvent, error) {
	began := time.Now()
	err := c.temporal.restart((*proc).kill)
	return faultEvent{
		Kind: kindTemporalRestart, Target: "temporal",
		Detail: fmt.Sprintf("SIGKILL, then serving again in %s", time.Since(began).Round(100*time.Millisecond)),
	}, err
}

// jitter is a pause of about every: half of it more or less, at random.
func jitter(every time.Duration) time.Duration {
	return every/2 + time.Duration(randomInt(int(every/time.Millisecond)))*time.Millisecond
}
