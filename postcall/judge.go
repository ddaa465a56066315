package postcall

import (
	"context"
	"encoding/json"

	"github.com/maestro-run/maestro/maestrotype"
)

// Gathered is everything the gather step collected about one ended call.
type Gathered struct {
	SessionID string `json:"session_id"`
	// Facts are the session's facts, keyed in snake_case like the catalog
	// templates that read them as .Session ("caller_number", "tenant_id").
	Facts map[string]string `json:"facts,omitempty"`
	// Deferred are the intents record-deferred tools recorded during the
	// call, in the order they were recorded.
	Deferred   []Deferred             `json:"deferred,omitempty"`
	Transcript maestrotype.Transcript `json:"transcript"`
}

// Deferred is one recorded intent.
type Deferred struct {
	// ID is the ledger's ID for the intent ("def_…"); it becomes the key of
	// the work item that delivers it.
	ID string `json:"id"`
	// Tool is the record-deferred tool that recorded it.
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// An Extractor judges one call: it decides which work the call left
// behind and what to dispatch for it.
//
// An implementation must key every item stably, so a re-run yields the
// same keys, and uniquely within the session: the dispatch step derives
// each item's operation key from it. It returns an error only when it
// cannot judge the call at all; work it found but cannot dispatch belongs
// in Result.Failures, so one bad item never holds back the rest.
type Extractor interface {
	Extract(ctx context.Context, g Gathered) (Result, error)
}

// Result is the judgement of one call. Keys are unique across Items and
// Failures together.
type Result struct {
	// Items are ready to dispatch, in order: recorded intents first, in
	// the order gathered, then transcript work by turn and, within a turn,
	// by rule.
	Items []maestrotype.WorkItem `json:"items,omitempty"`
	// Failures are work that was found but cannot be dispatched. The
	// persist step records them, so what was promised to the caller and
	// not delivered is visible rather than dropped.
	Failures []Failure `json:"failures,omitempty"`
}

// Failure is one piece of work the judge found but could not turn into a
// dispatchable item.
type Failure struct {
	// Key and Source are what the item's would have been, so a re-run
	// reports the same failure under the same key.
	Key        string `json:"key"`
	Source     string `json:"source"`
	DeferredID string `json:"deferred_id,omitempty"`
	// Tool is the tool the item would have been dispatched to, when known.
	Tool   string `json:"tool,omitempty"`
	Reason string `json:"reason"`
}
