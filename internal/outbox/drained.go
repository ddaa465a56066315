package outbox

import (
	"context"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/internal/ledger"
)

// drainedPoll is how often AwaitDrained looks at the outbox.
const drainedPoll = 5 * time.Millisecond

// AwaitDrained waits until st's outbox holds no signal due, for at most
// within: what a call queued has been delivered, so counting the ledger's
// work afterwards sees all of that call's work and none of the next's.
func AwaitDrained(ctx context.Context, st ledger.Store, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		due, err := st.OutboxListDue(ctx, 1)
		if err != nil {
			return fmt.Errorf("error reading the outbox: %w", err)
		}
		if len(due) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the outbox still owes %d or more signals after %s", len(due), within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(drainedPoll):
		}
	}
}
