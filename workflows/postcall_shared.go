package workflows

import (
	"strings"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Post-call workflow names.
const (
	PostCallWorkflowName     = "PostCall"
	ActivityPostCallGather   = "PostCallGather"
	ActivityPostCallJudge    = "PostCallJudge"
	ActivityPostCallDispatch = "PostCallDispatch"
	ActivityPostCallPersist  = "PostCallPersist"
)

// PostCallWorkflowID derives the post-call workflow's ID from the session.
func PostCallWorkflowID(sessionID string) string { return "postcall/" + sessionID }

// PostCallInput starts a post-call workflow.
type PostCallInput struct {
	SessionID string
	AgentID   string
	// Transcript is empty unless a call-ended signal queued before the
	// ledger kept transcripts carried it (see CallEnded).
	Transcript    mt.Transcript
	TranscriptRef string
}

// Delivery is what dispatching one item achieved.
type Delivery struct {
	SessionID    string             `json:"session_id"`
	Item         mt.WorkItem        `json:"item"`
	OperationKey string             `json:"operation_key"`
	InvocationID string             `json:"invocation_id,omitempty"`
	State        mt.InvocationState `json:"state"`
	Summary      string             `json:"summary"`
	Receipt      *mt.Receipt        `json:"receipt,omitempty"`
	// Attempts are every call made to deliver the item, in order, across
	// its channels.
	Attempts []Attempt `json:"attempts,omitempty"`
	// Pending: attempts go on; nothing is final yet.
	Pending bool `json:"pending,omitempty"`
	// Held: no channel delivered the item by its deadline, and a human
	// must.
	Held bool `json:"held,omitempty"`
	// Attempted counts the operation keys the item's attempts used, so a
	// retry an operator asks for continues after them.
	Attempted int `json:"attempted,omitempty"`
}

// PostCallResult is what the post-call workflow delivered.
type PostCallResult struct {
	Deliveries []Delivery       `json:"deliveries"`
	Failures   []mt.ItemFailure `json:"failures,omitempty"`
}

// PostCallOperationKey is the operation key of one post-call item, so a
// re-run dispatches nothing twice.
func PostCallOperationKey(sessionID, itemKey string) string {
	return "postcall:" + sessionID + ":" + itemKey
}

// heldSuffix ends the key a held item is listed under for reconciliation.
// Attempt keys end in "/<n>", so it names no effect.
const heldSuffix = "/held"

// PostCallHeldKey is the key a held post-call item is reconciled under.
func PostCallHeldKey(sessionID, itemKey string) string {
	return PostCallOperationKey(sessionID, itemKey) + heldSuffix
}

// ParsePostCallHeldKey reads a PostCallHeldKey back; ok is false for any
// other key. Item keys hold no colon, so the last one ends the session ID.
func ParsePostCallHeldKey(key string) (sessionID, itemKey string, ok bool) {
	rest, found := strings.CutPrefix(key, "postcall:")
	if !found {
		return "", "", false
	}
	rest, found = strings.CutSuffix(rest, heldSuffix)
	i := strings.LastIndex(rest, ":")
	if !found || i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}
