package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// settledPoll is how often a rollback's wait reads the ledger: short
// beside the provider calls it waits for, so the caller is not kept
// waiting after the last one settles.
const settledPoll = 100 * time.Millisecond

// AwaitSettled waits until none of the effects under in.Keys is in
// progress, or in.Until passes. It says nothing about how they settled:
// the compensation reads each effect again before it undoes it.
func (a *Activities) AwaitSettled(ctx context.Context, in workflows.AwaitSettledInput) error {
	pending := in.Keys
	for {
		var still []string
		for _, key := range pending {
			eff, err := a.cfg.Store.EffectGet(ctx, key)
			switch {
			case errors.Is(err, ledger.ErrNotFound):
			case err != nil:
				return retryable(ErrTypeLedger, fmt.Errorf("error reading the effect in flight %s: %w", key, err))
			case eff.Status == mt.EffectInProgress:
				still = append(still, key)
			}
		}
		if len(still) == 0 || !time.Now().Before(in.Until) {
			return nil
		}
		pending = still
		activity.RecordHeartbeat(ctx, len(still))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(settledPoll, time.Until(in.Until))):
		}
	}
}
