package workflows

import (
	"encoding/json"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// TaskQueue is where maestro's worker polls for workflow and activity tasks.
const TaskQueue = "maestro"

// Activity names, registered by the activities package.
const (
	ActivityExecute        = "Execute"
	ActivityRecordDeferred = "RecordDeferred"
	// ActivityFinalize leaves an invocation final in the ledger after its
	// workflow met an error it cannot recover from.
	ActivityFinalize = "Finalize"
	// ActivityDeliverParts delivers the parts of a composite effect (a page
	// by text and email) that had not gone out when the invocation
	// answered, after the answer.
	ActivityDeliverParts = "DeliverParts"
)

// SignalApprovalDecided wakes a gated invocation after an approver decided.
// The decision itself is read from the ledger, never trusted from the signal.
const SignalApprovalDecided = "approval-decided"

// QueryState answers an invocation's current state.
const QueryState = "state"

// InvocationWorkflowName is the registered name of InvocationWorkflow.
const InvocationWorkflowName = "Invocation"

// InvocationWorkflowID derives the workflow ID from the operation key: one
// key per business effect, so a duplicate request finds the same workflow.
func InvocationWorkflowID(operationKey string) string {
	return "invocation/" + operationKey
}

// InvocationInput starts one tool invocation. Args are canonical JSON,
// already validated and hashed at admission.
type InvocationInput struct {
	InvocationID string
	OperationKey string
	SessionID    string
	AgentID      string
	Tool         string
	Route        maestrotype.Route
	Args         json.RawMessage
	ArgsHash     string
	// ApprovalID is set for gated calls: admission opened the approval
	// request before the workflow started.
	ApprovalID string
	// PreApproved is set when policy decided at admission (an argument
	// condition approved the call), so there is nothing to wait for.
	PreApproved bool
	// ApprovalTimeout is how long a gated call waits for a decision.
	ApprovalTimeout time.Duration
	// Notify is set when the approver role has channels to be told on:
	// the invocation starts NotifyWorkflow for its request.
	Notify bool `json:",omitempty"`
	// Revision is the workflow shape admission started the invocation
	// under, InvocationRevision; zero for invocations started before it,
	// which ask workflow.GetVersion instead.
	Revision int `json:",omitempty"`
	// CatalogVersion is the catalog the call was admitted under, so the
	// activity need not read it from the ledger. Optional: empty for
	// invocations started before it, whose activity reads it.
	CatalogVersion string `json:",omitempty"`
}

// InvocationRevision is the invocation workflow's current shape: reads
// run as a local activity, a composite effect's remaining parts are
// delivered after the answer, and the approval timer starts only when
// the call waits for a decision. Carried in the input rather than asked
// of workflow.GetVersion, whose marker and search-attribute upsert cost
// two history events per call each (ADR 8); the input is recorded with
// the start, so replay reads the same value.
const InvocationRevision = 1

// InvocationResult is the invocation's final state and observation.
type InvocationResult struct {
	State       maestrotype.InvocationState
	Observation maestrotype.Observation
	// PendingParts names the parts of a composite effect still to be
	// delivered after the answer; the invocation stays running until they
	// are (ADR 14).
	PendingParts []string `json:",omitempty"`
}

// ExecuteInput asks the Execute activity to perform (or read) the effect.
type ExecuteInput struct {
	InvocationID string
	OperationKey string
	SessionID    string
	Tool         string
	Route        maestrotype.Route
	Args         json.RawMessage
	ArgsHash     string
	// ApprovalID is set for gated calls: the activity reads the decision
	// from the ledger and executes only an approved call.
	ApprovalID string
	// ApprovalExpired is set once the approval timer fired, so a request
	// still pending is closed by its timeout policy.
	ApprovalExpired bool
	// Background is set by workflows that deliver a composite effect's
	// remaining parts after answering (ActivityDeliverParts): only then
	// may the activity answer with parts still pending.
	Background bool `json:",omitempty"`
	// CatalogVersion is the catalog version the call runs under: the
	// invocation's input carries it from admission; for invocations
	// started without it, and for a compensation, the activities fill it
	// from the ledger (the invocation's row, or the original effect's).
	CatalogVersion string `json:",omitempty"`
}

// FinalizeInput asks the Finalize activity to leave an invocation final:
// failed with Cause when nothing was done, needs_reconciliation when its
// effect may have been performed, or as its settled effect recorded.
type FinalizeInput struct {
	Execute ExecuteInput
	// Cause is the error that ended the invocation, for the root cause.
	Cause string
}

// ApprovalDecision is what the workflow learns when it wakes up.
type ApprovalDecision struct {
	ApprovalID string
}

// Audit scan: a scheduled workflow reconciles money-class effects against
// approval records.
const (
	AuditWorkflowName   = "AuditScan"
	ActivityAuditScan   = "AuditScan"
	AuditScheduleID     = "maestro-audit-daily"
	AuditScanWorkflowID = "maestro-audit"
)

// AuditResult is what one audit scan found.
type AuditResult struct {
	Findings int
}

// Sweep: a scheduled workflow finishes what ended without finishing: an
// effect left in progress past its lease, or an invocation left open, whose
// workflow no longer runs (terminated, timed out, or failed before it
// could finalize).
const (
	SweepWorkflowName = "Sweep"
	ActivitySweep     = "Sweep"
	SweepScheduleID   = "maestro-sweep"
	SweepWorkflowID   = "maestro-sweep"
)

// Canary: a scheduled workflow fires each canary tool at its provider's
// test facilities and reads the effect back from the provider.
const (
	CanaryWorkflowName = "Canary"
	ActivityCanary     = "Canary"
	CanaryScheduleID   = "maestro-canary"
	CanaryWorkflowID   = "maestro-canary"
)

// SweepResult is what one sweep finished.
type SweepResult struct {
	// Held counts effects moved to needs_reconciliation.
	Held int
	// Finished counts invocations left final, Held's included.
	Finished int
}
