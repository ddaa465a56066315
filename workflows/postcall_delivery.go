package workflows

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/workflow"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// durableDeliveryVersion marks post-call workflows that keep delivering
// through provider outages, fall back to other channels and hold for a
// human what none delivered. Histories recorded before it dispatched each
// item once.
const durableDeliveryVersion = "durable-delivery"

// Post-call delivery activities.
const (
	ActivityPostCallAttempt = "PostCallAttempt"
	ActivityPostCallSettled = "PostCallSettled"
)

// AttemptOutcome is what one attempt at delivering a work item proved.
type AttemptOutcome string

const (
	// AttemptDelivered: the channel's provider issued a receipt.
	AttemptDelivered AttemptOutcome = "delivered"
	// AttemptRefused: the channel refused definitively (a provider's 4xx,
	// maestro's own configuration, the gate); retrying it cannot succeed.
	AttemptRefused AttemptOutcome = "refused"
	// AttemptUnavailable: the provider could not be reached and nothing
	// was done, so the channel is tried again under a new key.
	AttemptUnavailable AttemptOutcome = "unavailable"
	// AttemptUnknown: the provider may have acted. The attempt is held
	// for reconciliation and nothing is sent on its channel until it is
	// settled, unless the tool's on_unknown policy settled it at once to
	// send again (ResolvedBy).
	AttemptUnknown AttemptOutcome = "unknown"
)

// Attempt is one call made to deliver a work item.
type Attempt struct {
	// N numbers the item's attempts from 0; it names the operation key.
	N int `json:"n"`
	// Channel is 0 for the item's own tool, i for its i-th fallback.
	Channel      int            `json:"channel"`
	Tool         string         `json:"tool"`
	OperationKey string         `json:"operation_key"`
	InvocationID string         `json:"invocation_id,omitempty"`
	Outcome      AttemptOutcome `json:"outcome"`
	Summary      string         `json:"summary"`
	Receipt      *mt.Receipt    `json:"receipt,omitempty"`
	At           time.Time      `json:"at"`
	// ResolvedBy and Resolution record who settled an unknown attempt at
	// once, and why: the tool's on_unknown policy ("policy:on_unknown"),
	// which sends again rather than hold. Such an attempt is not waited
	// for; the channel is tried again after its backoff.
	ResolvedBy string `json:"resolved_by,omitempty"`
	Resolution string `json:"resolution,omitempty"`
}

// resent reports whether an unknown attempt was settled by policy to be
// sent again.
func (a Attempt) resent() bool {
	return a.Outcome == AttemptUnknown && a.ResolvedBy != ""
}

// AttemptInput asks for one attempt at delivering a work item.
type AttemptInput struct {
	SessionID    string          `json:"session_id"`
	ItemKey      string          `json:"item_key"`
	OperationKey string          `json:"operation_key"`
	Tool         string          `json:"tool"`
	Args         json.RawMessage `json:"args"`
	Channel      int             `json:"channel"`
	N            int             `json:"n"`
}

// DefaultBackoff is the pace when the worker configures none.
var DefaultBackoff = mt.Backoff{Initial: 30 * time.Second, Max: 10 * time.Minute}

func backoffOrDefault(b *mt.Backoff) mt.Backoff {
	if b == nil || b.Initial <= 0 || b.Max <= 0 {
		return DefaultBackoff
	}
	return *b
}

// AttemptOperationKey is the operation key of an item's n-th attempt: the
// first keeps the item's own key, so histories and ledgers from before
// attempts existed name the same effect.
func AttemptOperationKey(sessionID, itemKey string, n int) string {
	if n == 0 {
		return PostCallOperationKey(sessionID, itemKey)
	}
	return PostCallOperationKey(sessionID, itemKey) + "/" + strconv.Itoa(n)
}

// deliverer delivers one item along its channels.
type deliverer struct {
	in      PostCallInput
	backoff mt.Backoff
	actx    workflow.Context // ledger activities
	dctx    workflow.Context // attempts, which wait for their invocation
	first   int              // the number of the first attempt
	earlier []Attempt        // attempts an earlier run made
}

// deliver tries the item's channels in order. On each it retries what
// proves nothing was done until the channel's deadline, waits for a held
// attempt to be reconciled rather than send again, and moves on after a
// definitive refusal or the deadline. What no channel delivers is held
// for a human. Every attempt is persisted as it ends, so the session view
// shows the chain while it runs.
func (dl *deliverer) deliver(ctx workflow.Context, item mt.WorkItem) (Delivery, error) {
	d := Delivery{SessionID: dl.in.SessionID, Item: item, OperationKey: PostCallOperationKey(dl.in.SessionID, item.Key)}
	channels := append([]mt.Channel{{Tool: item.Tool, Args: item.Args, Deadline: item.Deadline}}, item.Fallbacks...)
	d.Attempts = append(d.Attempts, dl.earlier...)
	n := dl.first
	for ci, ch := range channels {
		end := workflow.Now(ctx).Add(ch.Deadline)
		wait := dl.backoff.Initial
		for {
			a := dl.attempt(ctx, item, ch, ci, n)
			// A key the gate admitted names its effect for good; the next
			// attempt needs its own. A key whose attempt never reached the
			// gate is used again.
			if a.InvocationID != "" || a.Outcome == AttemptRefused {
				n++
			}
			done, err := dl.record(ctx, &d, a, n)
			if done || err != nil {
				return d, err
			}
			if a.Outcome == AttemptUnknown && !a.resent() {
				// Nothing goes out on this channel while the attempt may
				// have acted: it waits for reconciliation to settle it.
				settled := dl.awaitSettled(ctx, a, end, &wait)
				if settled.Outcome == AttemptUnknown {
					break
				}
				if done, err := dl.record(ctx, &d, settled, n); done || err != nil {
					return d, err
				}
				// Found not to have happened: the channel is tried again.
			}
			if a.Outcome == AttemptRefused || !workflow.Now(ctx).Add(wait).Before(end) {
				break
			}
			if err := workflow.Sleep(ctx, wait); err != nil {
				return d, err
			}
			wait = min(2*wait, dl.backoff.Max)
		}
	}
	d.Pending, d.Held, d.State = false, true, mt.InvocationFailed
	d.Summary = fmt.Sprintf("no channel delivered it after %d attempts; held for a human: %s", len(d.Attempts), d.Summary)
	return d, dl.persist(ctx, d)
}

// record adds an attempt to the item's chain and persists it; done is
// true once the attempt delivered the item.
func (dl *deliverer) record(ctx workflow.Context, d *Delivery, a Attempt, n int) (done bool, err error) {
	d.Attempts = append(d.Attempts, a)
	d.Attempted = n
	if a.Outcome == AttemptDelivered {
		d.Pending, d.State, d.Summary, d.Receipt = false, mt.InvocationSucceeded, a.Summary, a.Receipt
		d.OperationKey, d.InvocationID = a.OperationKey, a.InvocationID
		return true, dl.persist(ctx, *d)
	}
	d.Pending, d.State, d.Summary = true, mt.InvocationFailed, a.Summary
	return false, dl.persist(ctx, *d)
}

// attempt makes one attempt. An attempt whose activity fails (the ledger
// is down) is reported unavailable under the same key, and the next try
// reuses that key: the gate answers a key it has seen with its invocation,
// never with a second effect.
func (dl *deliverer) attempt(ctx workflow.Context, item mt.WorkItem, ch mt.Channel, ci, n int) Attempt {
	in := AttemptInput{
		SessionID: dl.in.SessionID, ItemKey: item.Key, OperationKey: AttemptOperationKey(dl.in.SessionID, item.Key, n),
		Tool: ch.Tool, Args: ch.Args, Channel: ci, N: n,
	}
	var a Attempt
	if err := workflow.ExecuteActivity(dl.dctx, ActivityPostCallAttempt, in).Get(ctx, &a); err != nil {
		return Attempt{N: n, Channel: ci, Tool: ch.Tool, OperationKey: in.OperationKey, Outcome: AttemptUnavailable,
			Summary: "the attempt could not be made: " + rootCause(err), At: workflow.Now(ctx)}
	}
	return a
}

// awaitSettled waits, with the channel's backoff, for a held attempt to
// be reconciled: by a search of the provider, or by a human. It returns
// the attempt as settled (delivered, or unavailable when it proved not to
// have happened), or still unknown at the channel's deadline.
func (dl *deliverer) awaitSettled(ctx workflow.Context, a Attempt, end time.Time, wait *time.Duration) Attempt {
	for workflow.Now(ctx).Add(*wait).Before(end) {
		if err := workflow.Sleep(ctx, *wait); err != nil {
			return a
		}
		*wait = min(2**wait, dl.backoff.Max)
		var got Attempt
		if err := workflow.ExecuteActivity(dl.actx, ActivityPostCallSettled, a).Get(ctx, &got); err != nil {
			continue
		}
		if got.Outcome != AttemptUnknown {
			return got
		}
	}
	return a
}

func (dl *deliverer) persist(ctx workflow.Context, d Delivery) error {
	return workflow.ExecuteActivity(dl.actx, ActivityPostCallPersist, d).Get(ctx, nil)
}
