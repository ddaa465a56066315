package apitype

import (
	"encoding/json"
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Approval is an approval request as ops tooling sees it.
type Approval struct {
	ID           string          `json:"approval_id"`
	InvocationID string          `json:"invocation_id"`
	OperationKey string          `json:"operation_key"`
	SessionID    string          `json:"session_id,omitempty"`
	AgentID      string          `json:"agent_id,omitempty"`
	Tool         string          `json:"tool"`
	Args         json.RawMessage `json:"args"`
	ArgsHash     string          `json:"args_hash"`
	ApproverRole string          `json:"approver_role,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	RiskTags     []string        `json:"risk_tags"`
	// Effect and Reversibility are the tool's classes when the request
	// opened; empty for requests from before they were recorded.
	Effect        string `json:"effect,omitempty"`
	Reversibility string `json:"reversibility,omitempty"`
	// Context is the session's recent calls, for the approver.
	Context json.RawMessage `json:"context,omitempty"`
	// Facts are the session's facts, each with who vouches for it, so the
	// approver can tell what the agent merely stated. Shown by
	// GET /v1/approvals/{id}.
	Facts     []SessionFact   `json:"facts,omitempty"`
	Status    string          `json:"status"`
	TimeoutAt time.Time       `json:"timeout_at"`
	DecidedBy string          `json:"decided_by,omitempty"`
	DecidedAt *time.Time      `json:"decided_at,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	Events    []ApprovalEvent `json:"events,omitempty"`
	// Outcome is how the request's call stands once it was decided: an
	// approver sees what their decision led to. Shown by
	// GET /v1/approvals/{id}; nil while the request is pending.
	Outcome *ApprovalOutcome `json:"outcome,omitempty"`
}

// ApprovalOutcome is what became of a decided request's call.
type ApprovalOutcome struct {
	// InvocationID names the call; empty for a rollback's compensation,
	// which is no agent's call.
	InvocationID string `json:"invocation_id,omitempty"`
	// State is the call's state (succeeded, failed, running…), or for a
	// compensation its effect's status.
	State string `json:"state"`
	// Summary and Wording are what the agent was given once the call
	// finished: maestro's account and the words it may say.
	Summary string `json:"summary,omitempty"`
	Wording string `json:"wording,omitempty"`
	// Receipt is the provider's proof of the effect.
	Receipt *mt.Receipt `json:"receipt,omitempty"`
}

// SessionFact is one session fact with its provenance: agent-declared,
// operator or platform-signed:<platform>.
type SessionFact struct {
	Name       string `json:"name"`
	Value      string `json:"value"`
	Provenance string `json:"provenance"`
}

// ApprovalEvent is one entry of a request's immutable log.
type ApprovalEvent struct {
	Kind           string          `json:"kind"`
	Actor          string          `json:"actor"`
	ArgsHashBefore string          `json:"args_hash_before,omitempty"`
	ArgsHashAfter  string          `json:"args_hash_after,omitempty"`
	Detail         json.RawMessage `json:"detail,omitempty"`
	At             time.Time       `json:"at"`
}

// ApprovalList is the body of GET /v1/approvals.
type ApprovalList struct {
	Approvals []Approval `json:"approvals"`
	Paging
}

// DecisionRequest is the body of POST /v1/approvals/{id}/{approve,reject,modify}.
type DecisionRequest struct {
	Reason string `json:"reason,omitempty"`
	// Args are the edited arguments, for modify only.
	Args json.RawMessage `json:"args,omitempty"`
}

// AuditFinding is one divergence between money effects and approvals.
type AuditFinding struct {
	Kind         string `json:"kind"`
	OperationKey string `json:"operation_key"`
	Tool         string `json:"tool"`
	ApprovalID   string `json:"approval_id,omitempty"`
	Detail       string `json:"detail"`
}

// AuditReport is the body of GET /v1/audit.
type AuditReport struct {
	CheckedAt time.Time      `json:"checked_at"`
	Clean     bool           `json:"clean"`
	Findings  []AuditFinding `json:"findings"`
}
