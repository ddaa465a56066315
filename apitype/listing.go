package apitype

import (
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Paging is what every listing says besides its page: how many rows its
// filters match in all, and where the next page starts.
type Paging struct {
	// Total counts every row the filters match, on every page.
	Total int `json:"total"`
	// Next is the cursor of the following page, to send back as ?cursor=;
	// absent on the last page. It is opaque.
	Next string `json:"next,omitempty"`
}

// ListQuery selects one page of a listing: GET /v1/approvals,
// /v1/reconciliations, /v1/sessions and /v1/refusals take it as query
// parameters. Every field is optional.
type ListQuery struct {
	// Status filters by status: an approval's status, a session's state,
	// a refusal's code, or a reconciliation's kind.
	Status string
	Tool   string
	Agent  string
	// NewerThan and OlderThan bound the rows' age: a duration back from
	// now ("15m", "2h") or an RFC 3339 time.
	NewerThan string
	OlderThan string
	// Cursor is a Next from the page before.
	Cursor string
	// Limit is the page's length: default 50, at most 500.
	Limit int
}

// SessionSummary is one row of GET /v1/sessions; GET /v1/sessions/{id}
// shows the whole session.
type SessionSummary struct {
	SessionID  string          `json:"session_id"`
	AgentID    string          `json:"agent_id"`
	State      mt.SessionState `json:"state"`
	HaltStep   string          `json:"halt_step,omitempty"`
	HaltReason string          `json:"halt_reason,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	EndedAt    *time.Time      `json:"ended_at,omitempty"`
}

// SessionList is the body of GET /v1/sessions: newest first.
type SessionList struct {
	Sessions []SessionSummary `json:"sessions"`
	Paging
}

// RefusalRecord is one logged refusal: a call or request refused before
// anything ran.
type RefusalRecord struct {
	ID           int64     `json:"id"`
	AgentID      string    `json:"agent_id,omitempty"`
	SessionID    string    `json:"session_id,omitempty"`
	Tool         string    `json:"tool,omitempty"`
	OperationKey string    `json:"operation_key,omitempty"`
	Code         mt.Code   `json:"code"`
	Detail       string    `json:"detail,omitempty"`
	At           time.Time `json:"at"`
}

// RefusalList is the body of GET /v1/refusals: newest first.
type RefusalList struct {
	Refusals []RefusalRecord `json:"refusals"`
	Paging
}
