package maestrotype

import (
	"encoding/json"
	"time"
)

// StateRead is what a catalog-declared read of a write's target saw: the
// before read just ahead of the effect, or the after read-back once it
// succeeded. A read that failed carries Error and no State.
type StateRead struct {
	// Source names what was read: "tool lookup_tenant" or
	// "GET sandbox /v1/tenants/t_1001".
	Source string `json:"source"`
	// Tool is the read tool that ran, for a read declared by tool.
	Tool string `json:"tool,omitempty"`
	// Args are the read tool's rendered arguments.
	Args json.RawMessage `json:"args,omitempty"`
	// Found is false when the read found nothing (a 404, an empty answer):
	// the record is absent, which after a delete is the expected state.
	Found bool `json:"found"`
	// State is the provider's answer.
	State json.RawMessage `json:"state,omitempty"`
	// Error is why the read failed; empty when it succeeded.
	Error  string    `json:"error,omitempty"`
	ReadAt time.Time `json:"read_at"`
}

// Failed reports whether the read did not get an answer.
func (r *StateRead) Failed() bool {
	return r != nil && r.Error != ""
}
