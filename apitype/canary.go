package apitype

import (
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// CanaryTool is one canary tool's state: its last result, read back from
// the provider, and whether agents are kept from it.
type CanaryTool struct {
	Tool string `json:"tool"`
	// State is green (the last run passed), red (it failed) or none (no
	// run yet). Only red withholds a tool.
	State string `json:"state"`
	// RequiresGreen is the catalog's requires_green_canary.
	RequiresGreen bool `json:"requires_green"`
	// Withheld is set when agents are not offered the tool: it requires
	// a green canary and the last run was red.
	Withheld bool   `json:"withheld"`
	RunID    string `json:"run_id,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Receipt is the provider's receipt for the last canary call.
	Receipt       *maestrotype.Receipt `json:"receipt,omitempty"`
	CheckedAt     *time.Time           `json:"checked_at,omitempty"`
	LastSuccessAt *time.Time           `json:"last_success_at,omitempty"`
}

// Canary states.
const (
	CanaryGreen = "green"
	CanaryRed   = "red"
	CanaryNone  = "none"
)

// CanaryStatus answers GET /v1/canary and POST /v1/canary/run: every tool
// of the catalog with a canary. RunID names the run a POST made.
type CanaryStatus struct {
	RunID string       `json:"run_id,omitempty"`
	Tools []CanaryTool `json:"tools"`
}
