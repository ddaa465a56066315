package ledger

import (
	"context"
	"time"
)

// InvocationGetter reads one invocation; every Store is one.
type InvocationGetter interface {
	InvocationGet(ctx context.Context, id string) (Invocation, error)
}

// AwaitInvocation reads invocation id now and then every interval, handing
// each read (or its error) to final, until final says the wait is over:
// it then returns that read and final's error. When ctx ends first it
// returns the last read and ctx's error. What counts as final, and whether
// a failed read ends the wait, is the caller's to say.
func AwaitInvocation(ctx context.Context, g InvocationGetter, id string, interval time.Duration, final func(Invocation, error) (bool, error)) (Invocation, error) {
	for {
		inv, err := g.InvocationGet(ctx, id)
		if done, ferr := final(inv, err); done {
			return inv, ferr
		}
		select {
		case <-ctx.Done():
			return inv, ctx.Err()
		case <-time.After(interval):
		}
	}
}
