package maestrotype

import (
	"encoding/json"
	"time"
)

// SessionState is the lifecycle of a call or agent session.
type SessionState string

const (
	SessionActive SessionState = "active"
	// SessionAwaitingApproval: a call of the session waits for a human.
	SessionAwaitingApproval SessionState = "awaiting_approval"
	// SessionHalted: a compensation failed; nothing runs until a human
	// resolves it.
	SessionHalted SessionState = "halted"
	// SessionRollingBack: a rollback is under way; the session admits no
	// new writes until it finishes. Derived from the ledger, never stored
	// as a state.
	SessionRollingBack SessionState = "rolling_back"
	// SessionEnded: the call ended; deferred work belongs to the post-call
	// workflow.
	SessionEnded SessionState = "ended"
)

// Turn is one utterance of a call transcript.
type Turn struct {
	Speaker string    `json:"speaker"`
	Text    string    `json:"text"`
	At      time.Time `json:"at"`
}

// Transcript is what was said on a call.
type Transcript struct {
	Turns []Turn `json:"turns"`
}

// WorkItem is one piece of deferred work the post-call workflow delivers
// through the normal gate.
type WorkItem struct {
	// Key identifies the item within its session, stably across re-runs:
	// the deferred item's ID, or the rule and turn that produced it.
	Key  string          `json:"key"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	// Source says where the item came from ("deferred:def_…",
	// "transcript:callback_request#3").
	Source string `json:"source"`
	// DeferredID links the item to a record-deferred intent, if any.
	DeferredID string `json:"deferred_id,omitempty"`
	// Deadline is how long delivery keeps trying Tool through provider
	// outages; zero (work judged before deadlines existed) means one
	// dispatch and no fallback.
	Deadline time.Duration `json:"deadline,omitempty"`
	// Fallbacks are the other channels, tried in order once Tool refuses
	// definitively or misses its deadline.
	Fallbacks []Channel `json:"fallbacks,omitempty"`
	// Urgent says the catalog found the work cannot wait: its deadlines
	// are already cut to the catalog's urgent deadline.
	Urgent bool `json:"urgent,omitempty"`
}

// Channel is one way of delivering a work item: a real-sync tool, its
// arguments and how long to keep trying it.
type Channel struct {
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args"`
	Deadline time.Duration   `json:"deadline"`
}
