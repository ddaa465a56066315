package workflows

import (
	"encoding/json"

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
	SessionID     string
	AgentID       string
	Transcript    mt.Transcript
	TranscriptRef string
}

// DeferredIntent is a record-deferred call recorded during the session.
type DeferredIntent struct {
	ID   string          `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// Gathered is everything the judge reads.
type Gathered struct {
	SessionID  string            `json:"session_id"`
	Facts      map[string]string `json:"facts,omitempty"`
	Deferred   []DeferredIntent  `json:"deferred"`
	Transcript mt.Transcript     `json:"transcript"`
	// TranscriptRef is fetched by the judge itself, so a fetched
	// transcript never passes through workflow history: only the work
	// items the judge finds in it do.
	TranscriptRef string `json:"transcript_ref,omitempty"`
}

// ItemFailure is a work item the judge could not turn into a call.
type ItemFailure struct {
	Key        string `json:"key"`
	Tool       string `json:"tool,omitempty"`
	Source     string `json:"source,omitempty"`
	DeferredID string `json:"deferred_id,omitempty"`
	Reason     string `json:"reason"`
}

// Judged is the judge's verdict: items to deliver and items that cannot be.
type Judged struct {
	Items    []mt.WorkItem `json:"items"`
	Failures []ItemFailure `json:"failures,omitempty"`
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
}

// PostCallResult is what the post-call workflow delivered.
type PostCallResult struct {
	Deliveries []Delivery    `json:"deliveries"`
	Failures   []ItemFailure `json:"failures,omitempty"`
}

// PostCallOperationKey is the operation key of one post-call item, so a
// re-run dispatches nothing twice.
func PostCallOperationKey(sessionID, itemKey string) string {
	return "postcall:" + sessionID + ":" + itemKey
}
