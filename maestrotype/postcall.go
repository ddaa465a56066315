package maestrotype

import (
	"encoding/json"
	"time"
)

// DeferredIntent is a record-deferred call recorded during the session.
type DeferredIntent struct {
	// ID is the ledger's ID for the intent ("def_…"); it becomes the key of
	// the work item that delivers it.
	ID string `json:"id"`
	// Tool is the record-deferred tool that recorded it.
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// Gathered is everything the post-call gather step collected about one
// ended call: what the judge reads, and how the workflow paces delivery.
type Gathered struct {
	SessionID string `json:"session_id"`
	// Facts are the session's facts, keyed in snake_case like the catalog
	// templates that read them as .Session ("caller_number", "tenant_id").
	Facts map[string]string `json:"facts,omitempty"`
	// Deferred are the intents record-deferred tools recorded during the
	// call, in the order they were recorded.
	Deferred []DeferredIntent `json:"deferred"`
	// Transcript is empty unless the call-ended signal carried it, as
	// signals queued before the ledger kept transcripts did: the judge
	// reads the transcript the call ended with from the ledger.
	Transcript Transcript `json:"transcript"`
	// Backoff paces delivery attempts; nil keeps the default.
	Backoff *Backoff `json:"backoff,omitempty"`
	// TranscriptRef is fetched by the judge itself, so a fetched
	// transcript never passes through workflow history: only the work
	// items the judge finds in it do.
	TranscriptRef string `json:"transcript_ref,omitempty"`
}

// Backoff paces the post-call attempts on one channel: doubling from
// Initial, at most Max apart, so a day's outage costs a bounded history.
type Backoff struct {
	Initial time.Duration `json:"initial"`
	Max     time.Duration `json:"max"`
}

// ItemFailure is a piece of work the judge found but could not turn into
// a dispatchable item. The persist step records it, so what was promised
// to the caller and not delivered is visible rather than dropped.
type ItemFailure struct {
	// Key and Source are what the item's would have been, so a re-run
	// reports the same failure under the same key.
	Key string `json:"key"`
	// Tool is the tool the item would have been dispatched to, when known.
	Tool       string `json:"tool,omitempty"`
	Source     string `json:"source,omitempty"`
	DeferredID string `json:"deferred_id,omitempty"`
	Reason     string `json:"reason"`
}

// Judged is the judge's verdict on one call: items to deliver and items
// that cannot be. Keys are unique across Items and Failures together.
type Judged struct {
	// Items are ready to dispatch, in order: recorded intents first, in
	// the order gathered, then transcript work by turn and, within a turn,
	// by rule.
	Items    []WorkItem    `json:"items"`
	Failures []ItemFailure `json:"failures,omitempty"`
}
