package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/maestro-run/maestro/apitype"
)

// Dependencies start-up waits for, as /readyz names them.
const (
	dependencyPostgres = "postgresql"
	dependencyTemporal = "temporal"
)

// Backoff between attempts to reach a dependency: short at first, so a
// dependency that comes up together with maestro costs little, and
// capped, so one that comes up late is noticed soon after.
const (
	firstRetryDelay = 250 * time.Millisecond
	maxRetryDelay   = 5 * time.Second
)

// readiness is what /readyz reports while start-up waits.
type readiness struct {
	mu sync.Mutex
	st apitype.Readiness
}

func (r *readiness) set(dependency string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st = apitype.Readiness{Status: apitype.ReadinessStarting, WaitingFor: dependency}
	if err != nil {
		r.st.Detail = err.Error()
	}
}

func (r *readiness) get() apitype.Readiness {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

// waitFor calls try until it succeeds, backing off between attempts and
// logging each failure, until ctx ends or deadline passes. label is how
// the dependency reads in the log and in the error.
func (d *Server) waitFor(ctx context.Context, dependency, label string, deadline time.Time, try func(context.Context) error) error {
	d.ready.set(dependency, nil)
	delay := firstRetryDelay
	var last error
	for attempt := 1; ; attempt++ {
		attemptCtx, cancel := context.WithDeadline(ctx, deadline)
		err := try(attemptCtx)
		cutShort := attemptCtx.Err() != nil
		cancel()
		if err == nil {
			return nil
		}
		// An attempt cut short by the deadline says less than the one
		// before it about why the dependency does not answer.
		if last != nil && cutShort {
			err = last
		}
		last = err
		d.ready.set(dependency, err)
		if ctx.Err() != nil {
			return fmt.Errorf("stopped while waiting for %s: %w", label, ctx.Err())
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%s did not answer within %s (%d attempts); last error: %w", label, d.cfg.DependencyTimeout, attempt, err)
		}
		wait := min(delay, left)
		d.cfg.Logger.Warn("waiting for "+label, "attempt", attempt, "error", err, "retry_in", wait.Round(time.Millisecond), "gives_up_in", left.Round(time.Second))
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped while waiting for %s: %w", label, ctx.Err())
		case <-time.After(wait):
		}
		delay = min(2*delay, maxRetryDelay)
	}
}
