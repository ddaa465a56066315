package apitype

import (
	"encoding/json"
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Session is a call or agent session as the API shows it: the ledger's
// record of its calls, undo stack, deferred work and post-call deliveries.
type Session struct {
	SessionID string            `json:"session_id"`
	AgentID   string            `json:"agent_id"`
	State     mt.SessionState   `json:"state"`
	Facts     map[string]string `json:"facts,omitempty"`
	// FactProvenance says who vouches for each fact: agent-declared,
	// operator or platform-signed:<platform>.
	FactProvenance map[string]string `json:"fact_provenance,omitempty"`
	HaltStep       string            `json:"halt_step,omitempty"`
	HaltReason     string            `json:"halt_reason,omitempty"`
	ResolvedBy     string            `json:"resolved_by,omitempty"`
	ResolveReason  string            `json:"resolve_reason,omitempty"`
	// Resolution is how the last halt was resolved: by_hand (the entries
	// the rollback could not run were closed with the reason) or retry
	// (the rollback ran again).
	Resolution string `json:"resolution,omitempty"`
	// RollbackStartedAt is set while a rollback runs; the session admits
	// no writes meanwhile (state rolling_back).
	RollbackStartedAt *time.Time     `json:"rollback_started_at,omitempty"`
	Calls             []SessionCall  `json:"calls"`
	UndoStack         []UndoEntry    `json:"undo_stack"`
	Deferred          []DeferredItem `json:"deferred"`
	PostCall          []PostCallItem `json:"postcall"`
	// PostCallStatus is the post-call workflow's status once the call has
	// ended: running, completed, failed, or not_started.
	PostCallStatus string     `json:"postcall_status,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	EndedAt        *time.Time `json:"ended_at,omitempty"`
}

// SessionCall is one call of a session.
type SessionCall struct {
	InvocationID string             `json:"invocation_id"`
	OperationKey string             `json:"operation_key"`
	Tool         string             `json:"tool"`
	Route        mt.Route           `json:"route"`
	State        mt.InvocationState `json:"state"`
	Summary      string             `json:"summary,omitempty"`
	// Wording is what the agent was given to say to the person, rendered
	// from the receipt; empty when the observation carried none.
	Wording string `json:"wording,omitempty"`
	// Receipt is the provider's proof of the call's effect.
	Receipt *mt.Receipt `json:"receipt,omitempty"`
	// Delivery is the provider's latest word on the message the call sent.
	Delivery *Delivery `json:"delivery,omitempty"`
	// FollowUp summarises what contradicts the call's observation since it
	// was answered (see Invocation.FollowUp).
	FollowUp string `json:"follow_up,omitempty"`
	// StateReads is the write's target before and after its effect, for
	// showing side by side.
	StateReads *StateReads `json:"state_reads,omitempty"`
}

// UndoEntry is one compensation on a session's undo stack, newest first.
type UndoEntry struct {
	UndoID       string          `json:"undo_id"`
	Seq          int64           `json:"seq"`
	OperationKey string          `json:"operation_key"`
	Tool         string          `json:"compensation_tool"`
	Version      string          `json:"compensation_version,omitempty"`
	Snapshot     json.RawMessage `json:"args_snapshot,omitempty"`
	Status       string          `json:"status"`
	Detail       string          `json:"detail,omitempty"`
	// Receipt is the provider's proof of the compensation, once it ran.
	Receipt *mt.Receipt `json:"receipt,omitempty"`
}

// DeferredItem is work recorded in-call for delivery after the call.
type DeferredItem struct {
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Status  string          `json:"status"`
	Receipt *mt.Receipt     `json:"receipt,omitempty"`
	Reason  string          `json:"reason,omitempty"`
}

// PostCallItem is one delivery of the post-call workflow.
type PostCallItem struct {
	Key          string      `json:"key"`
	Tool         string      `json:"tool"`
	Source       string      `json:"source"`
	OperationKey string      `json:"operation_key"`
	InvocationID string      `json:"invocation_id,omitempty"`
	Status       string      `json:"status"`
	Receipt      *mt.Receipt `json:"receipt,omitempty"`
	Reason       string      `json:"reason,omitempty"`
	// Attempts are the delivery chain so far.
	Attempts []DeliveryAttempt `json:"attempts,omitempty"`
}

// RollbackRequest is the body of POST /v1/sessions/{id}/rollback.
type RollbackRequest struct {
	Reason string `json:"reason,omitempty"`
}

// UndoOutcome is what one compensation did.
type UndoOutcome struct {
	UndoID       string      `json:"undo_id"`
	Tool         string      `json:"compensation_tool"`
	OperationKey string      `json:"operation_key"`
	Status       string      `json:"status"`
	Summary      string      `json:"summary"`
	Receipt      *mt.Receipt `json:"receipt,omitempty"`
}

// RollbackResult is the body answering a rollback: the steps in the LIFO
// order they ran.
type RollbackResult struct {
	Steps      []UndoOutcome `json:"steps"`
	Halted     bool          `json:"halted"`
	FailedStep string        `json:"failed_step,omitempty"`
}

// ResolveRequest is the body of POST /v1/sessions/{id}/resolve.
type ResolveRequest struct {
	Reason string `json:"reason"`
	// Retry runs the rollback again, the compensations it could not run
	// included. Without it the operator undid those by hand, and their
	// undo entries are closed with the reason.
	Retry bool `json:"retry,omitempty"`
}

// FactRequest is the body of PUT /v1/sessions/{id}/facts/{name}: a value an
// operator vouches for.
type FactRequest struct {
	Value string `json:"value"`
}

// EndRequest is the body of POST /v1/sessions/{id}/end: the transcript, or
// a reference to fetch it from.
type EndRequest struct {
	Transcript    *mt.Transcript `json:"transcript,omitempty"`
	TranscriptRef string         `json:"transcript_ref,omitempty"`
}

// EndResult answers the end of a session.
type EndResult struct {
	SessionID string `json:"session_id"`
	// Ended is false when the call had already ended: nothing was sent twice.
	Ended              bool   `json:"ended"`
	PostCallWorkflowID string `json:"postcall_workflow_id"`
}
