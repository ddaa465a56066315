// Package sweep holds what maestro's relays share: a loop that sweeps on a
// ticker (or when kicked), and the capped exponential backoff between a
// row's failed attempts.
package sweep

import (
	"context"
	"time"
)

// Every calls sweep at once, so that work an earlier process left owed is
// picked up, then every interval and whenever kick receives, until ctx is
// done. A nil kick never fires.
func Every(ctx context.Context, interval time.Duration, kick <-chan struct{}, sweep func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
	}
}

// Backoff is the wait after failures failed attempts: first, doubled for
// each failure after the first, never more than max.
func Backoff(first, max time.Duration, failures int) time.Duration {
	d := first
	for range failures {
		if d >= max/2 {
			return max
		}
		d *= 2
	}
	return min(d, max)
}
