// Package apitype holds the request and response bodies of maestro's HTTP
// API, shared by the server and the typed client.
package apitype

import (
	"encoding/json"
	"fmt"
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// InvokeRequest is the body of POST /v1/invocations.
type InvokeRequest struct {
	SessionID string          `json:"session_id"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	// OperationKey names the business effect, chosen when the agent decides
	// to act. Optional: default derived from the session, the tool and the
	// canonical arguments' hash, so a call re-issued under a new tool-call
	// ID names the same effect. For a read or a tool the catalog marks
	// repeatable, the derived key also carries ToolCallID, which is then
	// required.
	OperationKey string `json:"operation_key,omitempty"`
	// ToolCallID is the agent's ID for this call, kept for correlation.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// SessionContext carries facts the agent runtime (not the model) knows
	// about the conversation, such as the caller's number from telephony.
	// Approval conditions read them as session.<name>.
	SessionContext map[string]string `json:"session_context,omitempty"`
}

// Invocation is the API's view of one invocation.
type Invocation struct {
	InvocationID string `json:"invocation_id,omitempty"`
	OperationKey string `json:"operation_key,omitempty"`
	// ToolCallID is the agent's tool-call ID of the call that created the
	// invocation: a re-issued call answered with an earlier one's outcome
	// shows the earlier call's ID here.
	ToolCallID  string             `json:"tool_call_id,omitempty"`
	SessionID   string             `json:"session_id,omitempty"`
	Tool        string             `json:"tool,omitempty"`
	Route       mt.Route           `json:"route,omitempty"`
	State       mt.InvocationState `json:"state,omitempty"`
	ApprovalID  string             `json:"approval_id,omitempty"`
	Observation mt.Observation     `json:"observation"`
	// Delivery is the provider's latest word on the message the call sent,
	// once it has reported one.
	Delivery *Delivery `json:"delivery,omitempty"`
	// FollowUp is what the agent must relay when something learnt after
	// the observation contradicts it: a message reported sent that then
	// was not delivered. Observation stays as it was first answered.
	FollowUp *mt.Observation `json:"follow_up,omitempty"`
	// Callback is how the delivery of the final observation to the agent's
	// callback URL stands, for a call the agent was told is pending.
	Callback *Callback `json:"callback,omitempty"`
	// StateReads is the write's target before and after its effect, as
	// the catalog's before and after reads saw it.
	StateReads *StateReads `json:"state_reads,omitempty"`
	CreatedAt  *time.Time  `json:"created_at,omitempty"`
	UpdatedAt  *time.Time  `json:"updated_at,omitempty"`
}

// Callback is the delivery status of an invocation's callback.
type Callback struct {
	// Status is pending (owed, not yet accepted), delivered (the receiver
	// answered 2xx once) or failed (every allowed attempt failed).
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	LastError   string     `json:"last_error,omitempty"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
}

// Tool is one catalog row as an agent sees it.
type Tool struct {
	Name          string           `json:"name"`
	Description   string           `json:"description"`
	Effect        mt.Effect        `json:"effect"`
	Delivery      mt.Delivery      `json:"delivery"`
	Reversibility mt.Reversibility `json:"reversibility"`
	Route         mt.Route         `json:"route"`
	RiskTags      []string         `json:"risk_tags,omitempty"`
	InputSchema   json.RawMessage  `json:"input_schema"`
	ReceiptFields []string         `json:"receipt_fields,omitempty"`
}

// ToolList is the body of GET /v1/tools.
type ToolList struct {
	Agent string `json:"agent"`
	Tools []Tool `json:"tools"`
}

// Readiness is the body of GET /readyz.
type Readiness struct {
	// Status is ReadinessReady, ReadinessStarting, ReadinessUnavailable
	// or ReadinessDraining.
	Status string `json:"status"`
	// WaitingFor names the dependency that does not answer, while
	// starting or unavailable: "postgresql" or "temporal".
	WaitingFor string `json:"waiting_for,omitempty"`
	// Detail is why the last attempt to reach it failed, if one has.
	Detail string `json:"detail,omitempty"`
	// Catalog is the catalog version this process serves, once started.
	Catalog string `json:"catalog,omitempty"`
	// CatalogDrift says why this process does not serve the version the
	// ledger names current (its own file differs), if it does not.
	CatalogDrift string `json:"catalog_drift,omitempty"`
}

// Readiness statuses.
const (
	ReadinessReady    = "ready"
	ReadinessStarting = "starting"
	// ReadinessUnavailable: started, but a dependency does not answer now.
	ReadinessUnavailable = "unavailable"
	// ReadinessDraining: stopping; finishing the work in flight, taking
	// no more.
	ReadinessDraining = "draining"
)

// Health is the body of GET /healthz.
type Health struct {
	Status string `json:"status"`
}

// Refusal is a request refused before anything ran: the HTTP status and
// the observation the API answers with. It is an error, so the gate can
// return it through code that only knows errors.
type Refusal struct {
	HTTPStatus  int
	Observation mt.Observation
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("refused (%s): %s", r.Observation.Code, r.Observation.Summary)
}

// CatalogVersions answers GET /v1/catalog/versions: the version every
// process on the ledger converges on, the one this process serves, and
// when each recent version became current.
type CatalogVersions struct {
	// Current is the version activated last, which every process follows.
	Current string `json:"current"`
	// Served is the version the answering process serves: it differs from
	// Current for the few seconds a process takes to follow a reload, or
	// while its own file is another version (its /readyz says so).
	Served string `json:"served"`
	// Activations are the most recent activations, newest first.
	Activations []CatalogActivation `json:"activations"`
}

// CatalogActivation is one time a catalog version became current.
type CatalogActivation struct {
	Version     string    `json:"version"`
	ActivatedAt time.Time `json:"activated_at"`
}

// CatalogReload answers POST /v1/catalog/reload: the process re-read its
// catalog file and either swapped to it (200) or, the file breaking some
// rule, kept the catalog it had (422, Violations listing every problem).
type CatalogReload struct {
	// Version is the catalog version served after the request: the new
	// one, or on refusal the one kept.
	Version string `json:"version"`
	// Previous is the version served before the request.
	Previous string `json:"previous"`
	// Changed is false when the file was the version already served.
	Changed bool `json:"changed"`
	// Violations lists every rule the file breaks; empty on success.
	Violations []string `json:"violations,omitempty"`
}
