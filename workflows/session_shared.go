package workflows

import (
	"strings"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// Session workflow names.
const (
	SessionWorkflowName = "Session"
	// SignalCallRecorded tells the session about one of its calls, on
	// admission and again when the call's state changes.
	SignalCallRecorded = "call-recorded"
	// SignalCallEnded is the call-ended signal: it hands deferred work to
	// the post-call workflow. The transcript stays in the ledger.
	SignalCallEnded = "call-ended"
	// UpdateRollback runs the saga: compensations in LIFO order.
	UpdateRollback = "rollback"
	// UpdateResolve returns a halted session to active, with a reason.
	UpdateResolve = "resolve"
	// QuerySession answers the session's view.
	QuerySession = "session"

	ActivityUndoList       = "UndoList"
	ActivityCompensate     = "Compensate"
	ActivitySessionHalt    = "SessionHalt"
	ActivitySessionResolve = "SessionResolve"
	ActivitySessionEnd     = "SessionEnd"
	// ActivitySessionRollbackBegin closes the session to new effects in
	// the ledger before a rollback waits for the calls in flight;
	// ActivitySessionRollbackEnd opens it again.
	ActivitySessionRollbackBegin = "SessionRollbackBegin"
	ActivitySessionRollbackEnd   = "SessionRollbackEnd"
	// ActivityAwaitSettled waits, reading the ledger, for the effects a
	// rollback found in flight to settle.
	ActivityAwaitSettled = "AwaitSettled"
	// ActivityCompensationApproval opens the approval request a
	// money-class compensation waits on.
	ActivityCompensationApproval = "CompensationApproval"
)

// CompensationOperationKey is the key a compensation runs under: the undo
// entry's ID, in a key space admission reserves for rollback.
func CompensationOperationKey(undoID string) string { return "undo-" + undoID }

// IsCompensationKey reports whether an operation key is a compensation's.
func IsCompensationKey(key string) bool { return strings.HasPrefix(key, "undo-") }

// ApprovalWorkflowID names the workflow that waits on an approval request:
// a compensation's request wakes its session, any other request its
// invocation.
func ApprovalWorkflowID(operationKey, sessionID string) string {
	if IsCompensationKey(operationKey) {
		return SessionWorkflowID(sessionID)
	}
	return InvocationWorkflowID(operationKey)
}

// SessionWorkflowID derives a session workflow's ID from the session ID.
func SessionWorkflowID(sessionID string) string { return sessionWorkflowPrefix + sessionID }

const sessionWorkflowPrefix = "session/"

// ParseSessionWorkflowID reads a SessionWorkflowID back; ok is false for
// any other workflow ID.
func ParseSessionWorkflowID(workflowID string) (sessionID string, ok bool) {
	sessionID, ok = strings.CutPrefix(workflowID, sessionWorkflowPrefix)
	return sessionID, ok && sessionID != ""
}

// SessionInput starts a session workflow.
type SessionInput struct {
	SessionID string
	AgentID   string
	// OnFailure is the agent's policy when a call fails: rollback, or
	// empty for none, as sessions have always been started.
	OnFailure maestrotype.OnFailure
	// MaxLifetime ends a session no call-ended signal ends. Optional:
	// default 24h.
	MaxLifetime time.Duration
	// RollbackWait bounds how long a rollback waits for the session's
	// calls in flight to settle before it compensates. Optional: default
	// DefaultRollbackWait.
	RollbackWait time.Duration
}

// DefaultRollbackWait is how long a rollback waits for calls in flight
// when nothing configures it: longer than a back office usually takes to
// answer, short enough that a caller is not kept waiting for a human.
const DefaultRollbackWait = 30 * time.Second

// CallRecord is one tool call of a session and its latest outcome.
type CallRecord struct {
	InvocationID string                      `json:"invocation_id"`
	OperationKey string                      `json:"operation_key"`
	Tool         string                      `json:"tool"`
	Route        maestrotype.Route           `json:"route"`
	State        maestrotype.InvocationState `json:"state"`
	Summary      string                      `json:"summary,omitempty"`
}

// SessionView is what the session query answers.
type SessionView struct {
	SessionID  string                   `json:"session_id"`
	State      maestrotype.SessionState `json:"state"`
	Calls      []CallRecord             `json:"calls"`
	HaltStep   string                   `json:"halt_step,omitempty"`
	HaltReason string                   `json:"halt_reason,omitempty"`
	Rollbacks  []RollbackResult         `json:"rollbacks,omitempty"`
}

// RollbackRequest asks the session to run its compensations.
type RollbackRequest struct {
	Actor  string `json:"actor"`
	Reason string `json:"reason,omitempty"`
}

// UndoStep is one compensation to run, as listed from the ledger.
type UndoStep struct {
	UndoID       string `json:"undo_id"`
	Tool         string `json:"tool"`
	OperationKey string `json:"operation_key"`
	Seq          int64  `json:"seq"`
	// NeedsApproval is set for a money-class compensation: it runs only
	// once a human with its tool's approver role approved it.
	NeedsApproval bool `json:"needs_approval,omitempty"`
	// ApprovalID is the request the compensation waits on, once opened.
	ApprovalID string `json:"approval_id,omitempty"`
	// ApprovalExpired is set once the request's timeout passed, so a
	// request still pending is closed as timed out.
	ApprovalExpired bool `json:"approval_expired,omitempty"`
	// Unsettled is set when the step's effect was still in flight as the
	// rollback listed it: the rollback waits for it to settle.
	Unsettled bool `json:"unsettled,omitempty"`
}

// UndoStatus values of an UndoOutcome.
const (
	UndoCompensated = "compensated"
	UndoSkipped     = "skipped"
	UndoFailed      = "failed"
	// UndoPending is a step that could not run because its effect was
	// still unsettled after the rollback waited: the entry stays pending
	// and runs when the rollback is retried.
	UndoPending = "pending"
	// UndoAwaitingApproval is a money-class compensation waiting for a
	// human; the rollback goes on in the session once they decide.
	UndoAwaitingApproval = "awaiting_approval"
)

// AwaitSettledInput asks to wait until the effects under Keys have
// settled, or Until passes.
type AwaitSettledInput struct {
	Keys  []string  `json:"keys"`
	Until time.Time `json:"until"`
}

// CompensationApprovalInput opens the approval request of one gated
// compensation.
type CompensationApprovalInput struct {
	Step    UndoStep
	AgentID string
	// Actor and Reason are the rollback's, shown to the approver.
	Actor  string
	Reason string
}

// CompensationApproval is the request a gated compensation waits on. An
// empty ApprovalID means there is nothing to approve (the effect never
// happened, or the entry is already settled): the compensation activity
// settles the step without a human.
type CompensationApproval struct {
	ApprovalID string
	Timeout    time.Duration
}

// UndoOutcome is what one compensation did.
type UndoOutcome struct {
	UndoStep
	Status  string               `json:"status"`
	Summary string               `json:"summary"`
	Receipt *maestrotype.Receipt `json:"receipt,omitempty"`
}

// RollbackResult is what a rollback did, step by step in LIFO order.
type RollbackResult struct {
	Actor      string        `json:"actor"`
	Reason     string        `json:"reason,omitempty"`
	Steps      []UndoOutcome `json:"steps"`
	Halted     bool          `json:"halted"`
	FailedStep string        `json:"failed_step,omitempty"`
	// Pending is set when the rollback stopped at a compensation awaiting
	// approval; it goes on, and its final result joins the session view.
	Pending bool `json:"pending,omitempty"`
}

// ResolveRequest clears a halt.
type ResolveRequest struct {
	Actor  string `json:"actor"`
	Reason string `json:"reason"`
	// HaltedInLedger is set when the ledger holds a halt the workflow did
	// not make itself, such as a rejection under on_reject: halt.
	HaltedInLedger bool `json:"halted_in_ledger,omitempty"`
	// Retry runs the rollback again once the halt is cleared, the entries
	// it could not run included. Without it the operator undid those by
	// hand, and their entries are closed with the reason.
	Retry bool `json:"retry,omitempty"`
}

// HaltInput records a halt in the ledger.
type HaltInput struct {
	SessionID string
	Step      string
	Reason    string
}

// CallEnded is the call-ended signal's payload.
type CallEnded struct {
	// Transcript is empty in what the API signals: the ledger keeps the
	// transcript the call ended with, and the post-call judge reads it
	// there, as a transcript may be larger than Temporal's payload limit.
	// Signals queued before that still carry it, and are judged by it.
	Transcript maestrotype.Transcript `json:"transcript"`
	// TranscriptRef is a URL to fetch the transcript from instead.
	TranscriptRef string `json:"transcript_ref,omitempty"`
}
