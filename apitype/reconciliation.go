package apitype

import (
	"encoding/json"
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Reconciliation is an effect whose outcome was unknown, as ops sees it:
// held while its status is needs_reconciliation, settled once a finding or
// a human decided it.
type Reconciliation struct {
	OperationKey string `json:"operation_key"`
	InvocationID string `json:"invocation_id,omitempty"`
	Tool         string `json:"tool"`
	// Effect is the tool's effect class; money is only ever settled by a
	// human.
	Effect string `json:"effect"`
	// ApproverRole is the role paged for a held money effect: the one
	// that approves the tool.
	ApproverRole string `json:"approver_role,omitempty"`
	// Status is the effect's ledger status.
	Status string `json:"status"`
	// Reason says why the outcome was unknown, or how it was settled.
	Reason string `json:"reason,omitempty"`
	// Searchable says whether a check can settle it from the provider's
	// records; otherwise only a human's decision can.
	Searchable bool `json:"searchable"`
	// Request is the provider call that may or may not have taken effect.
	Request json.RawMessage `json:"request,omitempty"`
	// Receipt is what the effect was settled with, if it succeeded.
	Receipt *mt.Receipt `json:"receipt,omitempty"`
	// Delivery is set for a succeeded send whose message the provider then
	// reported undelivered, failed or canceled: the agent told the person
	// it was sent, and it never arrived.
	Delivery *Delivery `json:"delivery,omitempty"`
	// Held is set for post-call work no channel delivered: what the
	// caller was promised, and every attempt made to keep the promise.
	Held *HeldDelivery `json:"held_delivery,omitempty"`
	// HeldSignal is set for a signal Temporal refused as invalid: what it
	// owed (a call's post-call work, an approval's wake-up) did not
	// happen, and no retry would make it happen.
	HeldSignal *HeldSignal           `json:"held_signal,omitempty"`
	Attempts   int                   `json:"attempts"`
	ClaimedAt  time.Time             `json:"claimed_at"`
	UpdatedAt  time.Time             `json:"updated_at"`
	Events     []ReconciliationEvent `json:"events,omitempty"`
}

// ReconciliationEvent is one entry of a key's append-only reconciliation
// log: a finding (adopted, absent, replayed, escalated) or a human's
// decision (delivered, not_delivered).
type ReconciliationEvent struct {
	Kind    string      `json:"kind"`
	Actor   string      `json:"actor"`
	Reason  string      `json:"reason"`
	Receipt *mt.Receipt `json:"receipt,omitempty"`
	At      time.Time   `json:"at"`
}

// ReconciliationList is the body of GET /v1/reconciliations.
type ReconciliationList struct {
	Reconciliations []Reconciliation `json:"reconciliations"`
	Paging
}

// Outcomes a human may decide with ReconciliationDecision.
const (
	OutcomeDelivered    = "delivered"
	OutcomeNotDelivered = "not_delivered"
)

// ReconciliationDecision is the body of POST /v1/reconciliations/{key}/resolve.
type ReconciliationDecision struct {
	// Outcome is delivered or not_delivered.
	Outcome string `json:"outcome"`
	// Reason is what the operator checked, and where. Required.
	Reason string `json:"reason"`
}

// HeldSignal is a signal held for a human because Temporal refused it as
// invalid; Reconciliation.Reason carries Temporal's answer.
type HeldSignal struct {
	WorkflowID string `json:"workflow_id"`
	SignalName string `json:"signal_name"`
	// SessionID is the call a call-ended signal would have ended in its
	// workflow: its post-call work never started.
	SessionID string `json:"session_id,omitempty"`
	// PayloadBytes is the size of the refused argument.
	PayloadBytes int `json:"payload_bytes"`
}

// HeldDelivery is post-call work held for a human because no channel
// delivered it by its deadline or every channel refused it.
type HeldDelivery struct {
	SessionID  string `json:"session_id"`
	ItemKey    string `json:"item_key"`
	DeferredID string `json:"deferred_id,omitempty"`
	Source     string `json:"source"`
	Urgent     bool   `json:"urgent"`
	// Words are what the caller said, as recorded; CallbackNumber is the
	// number to reach them on, when known.
	Words          string            `json:"words,omitempty"`
	CallbackNumber string            `json:"callback_number,omitempty"`
	Attempts       []DeliveryAttempt `json:"attempts"`
}

// DeliveryAttempt is one call made to deliver post-call work.
type DeliveryAttempt struct {
	N            int         `json:"n"`
	Channel      int         `json:"channel"`
	Tool         string      `json:"tool"`
	OperationKey string      `json:"operation_key"`
	InvocationID string      `json:"invocation_id,omitempty"`
	Outcome      string      `json:"outcome"`
	Summary      string      `json:"summary"`
	Receipt      *mt.Receipt `json:"receipt,omitempty"`
	At           time.Time   `json:"at"`
	// ResolvedBy and Resolution show an unknown attempt the tool's
	// on_unknown policy settled at once to send again.
	ResolvedBy string `json:"resolved_by,omitempty"`
	Resolution string `json:"resolution,omitempty"`
}

// Metrics are the counters GET /v1/metrics answers, counted since the
// process started.
type Metrics struct {
	// PostCallHeldTotal counts post-call work held for a human: deferred
	// promises no channel kept by their deadline.
	PostCallHeldTotal int64 `json:"postcall_held_total"`
}
