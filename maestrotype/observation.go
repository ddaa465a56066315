package maestrotype

import (
	"encoding/json"
	"time"
)

// Status is the field an agent branches on.
type Status string

const (
	StatusSuccess Status = "success"
	StatusWarning Status = "warning"
	StatusError   Status = "error"
	StatusPending Status = "pending"
)

// Code is a stable, machine-readable reason attached to non-success
// observations.
type Code string

const (
	CodeUnauthorized        Code = "unauthorized"
	CodeUnknownTool         Code = "unknown_tool"
	CodeToolNotAllowed      Code = "tool_not_allowed"
	CodeInvalidArgs         Code = "invalid_args"
	CodeInvalidRequest      Code = "invalid_request"
	CodePayloadTooLarge     Code = "payload_too_large"
	CodeUnsupportedMedia    Code = "unsupported_media_type"
	CodeKeyReused           Code = "operation_key_reused"
	CodeNotFound            Code = "not_found"
	CodeProviderRejected    Code = "provider_rejected"
	CodeProviderUnavailable Code = "provider_unavailable"
	CodeOutcomeUnknown      Code = "outcome_unknown"
	CodeInProgress          Code = "in_progress"
	CodeAwaitingApproval    Code = "awaiting_approval"
	CodeApprovalRejected    Code = "approval_rejected"
	CodeApprovalTimedOut    Code = "approval_timed_out"
	CodeApprovalExpired     Code = "approval_token_expired"
	CodeApprovalClosed      Code = "approval_closed"
	CodeNotApprover         Code = "not_approver"
	// CodeNotPermitted: the operator holds none of the roles the
	// catalog's permissions name for the action.
	CodeNotPermitted  Code = "not_permitted"
	CodeSessionHalted Code = "session_halted"
	CodeSessionEnded  Code = "session_ended"
	// CodeSessionAwaitingApproval: a write was refused because one of the
	// session's irreversible or money calls waits for a human; the
	// observation names the approval request.
	CodeSessionAwaitingApproval Code = "session_awaiting_approval"
	// CodeSessionRollingBack: a write was refused because the session is
	// being rolled back.
	CodeSessionRollingBack Code = "session_rolling_back"
	// CodeSessionForbidden: the session belongs to another agent.
	CodeSessionForbidden Code = "session_forbidden"
	// CodeCanaryRed: the tool requires a green reality canary, and its
	// last canary run failed, so it is not offered to agents.
	CodeCanaryRed Code = "canary_red"
	// CodeTranscriptRefused: a transcript_ref breaks the fetch policy
	// (host allowlist, scheme); the observation names the rule.
	CodeTranscriptRefused Code = "transcript_ref_refused"
	CodeDeferred          Code = "deferred"
	CodeInternal          Code = "internal"
	// CodeStarting: maestro is up but still waiting for PostgreSQL or
	// Temporal, so it admits nothing yet.
	CodeStarting Code = "starting"
	// CodeHumanAttested: an effect whose outcome was unknown was recorded as
	// done on a human's word, with no receipt from the provider.
	CodeHumanAttested Code = "human_attested"
	// CodeNotDelivered: an effect whose outcome was unknown was found, by
	// the provider's records or a human, not to have happened.
	CodeNotDelivered Code = "not_delivered"
	// CodePartlyDelivered: a tool of several provider effects (a page by
	// text and email) performed some of them; the payload names each
	// part's state and receipt, and the wording what went out.
	CodePartlyDelivered Code = "partly_delivered"
	// CodeAborted: the invocation stopped (its workflow failed, was
	// terminated or timed out) before it performed anything.
	CodeAborted Code = "invocation_aborted"
	// CodeNotHeld: a reconciliation decision found the effect already
	// settled, or never held for reconciliation.
	CodeNotHeld Code = "not_held_for_reconciliation"
	// CodeDeliveryFailed: a message the provider accepted, and the agent
	// was told was sent, ended undelivered, failed or canceled.
	CodeDeliveryFailed Code = "delivery_failed"

	// CodeNothingFound: a lookup ran and found nothing. It is a warning:
	// the call worked, and the agent needs a next step, not a retry.
	CodeNothingFound Code = "nothing_found"
	// CodeMisconfigured: the call failed because of maestro's own
	// configuration (credentials the provider refused, a service or
	// connector setting nobody configured). No argument the agent chooses
	// can fix it, so it stops and hands over.
	CodeMisconfigured Code = "maestro_misconfigured"
	// CodeBeforeReadFailed: the catalog reads a write's target just before
	// its effect, that read failed, and the effect was not sent.
	CodeBeforeReadFailed Code = "before_read_failed"
	// CodeTooManyAttempts: requests from the caller's address failed the
	// key check too often, so this one was refused unchecked; Retry-After
	// says when to try again.
	CodeTooManyAttempts Code = "too_many_attempts"
	// CodeAgentCapReached: the call would take the agent past a cap the
	// catalog sets on what it may hold open at once (approval requests
	// waiting for a human, sessions not ended); nothing was recorded or run.
	CodeAgentCapReached Code = "agent_cap_reached"
)

// MaxPayloadBytes caps an observation's payload so a tool result never
// floods the agent's context.
const MaxPayloadBytes = 4096

// Observation is the one shape every tool result takes, success and failure
// alike.
type Observation struct {
	Status  Status `json:"status"`
	Code    Code   `json:"code,omitempty"`
	Summary string `json:"summary"`
	// Wording is what the agent may say to the human. It is rendered from
	// the receipt, so it can only claim what the receipt proves.
	Wording     string          `json:"wording,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Source      *Source         `json:"source,omitempty"`
	Receipt     *Receipt        `json:"receipt,omitempty"`
	NextActions *NextActions    `json:"next_actions,omitempty"`
}

// Source is the provenance of an observation.
type Source struct {
	System       string `json:"system"`
	Tool         string `json:"tool,omitempty"`
	OperationKey string `json:"operation_key,omitempty"`
	InvocationID string `json:"invocation_id,omitempty"`
	// TraceID is the OpenTelemetry trace the call ran in, when tracing is
	// on.
	TraceID string `json:"trace_id,omitempty"`
}

// NextActions tells the agent what to do next. Every failure carries a root
// cause, a safe remediation and an explicit condition for giving up.
type NextActions struct {
	RootCause     string   `json:"root_cause,omitempty"`
	Remediation   string   `json:"remediation,omitempty"`
	StopCondition string   `json:"stop_condition,omitempty"`
	Steps         []string `json:"steps,omitempty"`
}

// Receipt is the proof, issued by the system that performed an effect, that
// the effect happened.
type Receipt struct {
	// Provider names the system that issued the receipt ("twilio", "ses",
	// "http:sandbox").
	Provider string `json:"provider"`
	// ID is the provider's own identifier of the effect (message SID,
	// SES message ID, resource ID).
	ID string `json:"id"`
	// Status is the provider's status at the time of the receipt.
	Status string `json:"status,omitempty"`
	// Fields holds the typed receipt fields the catalog names, e.g.
	// message_sid for Twilio or message_id for SES.
	Fields   map[string]string `json:"fields"`
	IssuedAt time.Time         `json:"issued_at"`
}

// Receipt fields, as Receipt.Fields names them. The built-in connectors
// fill in the first four; the catalog's receipt and wording templates read
// them by these names.
const (
	ReceiptMessageSID = "message_sid" // Twilio message SID
	ReceiptMessageID  = "message_id"  // SES message ID
	ReceiptResourceID = "resource_id" // ID of the resource an HTTP API created or changed
	ReceiptStatus     = "status"      // the provider's status at receipt time

	// ReceiptAttestedBy and ReceiptReason are who attested a held effect
	// and why, on the receipt a human attests.
	ReceiptAttestedBy = "attested_by"
	ReceiptReason     = "reason"
	// ReceiptResentAfterUnknown marks the receipt of a part sent again
	// after an answer that proved nothing: the provider may hold two of it.
	ReceiptResentAfterUnknown = "resent_after_unknown"
)
