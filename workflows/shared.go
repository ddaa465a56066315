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
}

// InvocationResult is the invocation's final state and observation.
type InvocationResult struct {
	State       maestrotype.InvocationState
	Observation maestrotype.Observation
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
