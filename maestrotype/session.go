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
}
