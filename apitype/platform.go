package apitype

import (
	"encoding/json"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// PlatformExport is what a builder pastes into a voice platform's
// dashboard for one agent: the body of GET
// /v1/platforms/{platform}/agents/{agent}/tools.
type PlatformExport struct {
	Platform string `json:"platform"`
	AgentID  string `json:"agent_id"`
	// SecretEnv names the environment variable maestro reads the
	// platform's secret from; the export never carries the secret itself.
	SecretEnv string `json:"secret_env"`
	// AnswerBudgetSeconds is how long maestro waits for a call's outcome
	// before answering with its pending wording; the exported platform
	// timeouts are longer.
	AnswerBudgetSeconds float64 `json:"answer_budget_seconds"`
	// ToolsURL is where the platform sends tool calls (ElevenLabs: per
	// tool, see each tool), and EventsURL where it sends the end of the
	// call.
	ToolsURL  string `json:"tools_url"`
	EventsURL string `json:"events_url"`
	// Tools are the tool definitions in the platform's own JSON, one per
	// exposed tool, sorted by name.
	Tools []json.RawMessage `json:"tools"`
	// Settings is the rest of the dashboard configuration in the
	// platform's terms (credentials, webhook settings).
	Settings json.RawMessage `json:"settings"`
	// Steps says, in words, where each part goes.
	Steps []string `json:"steps"`
}

// PlatformAnswer is what maestro answers an ElevenLabs server tool or a
// Retell custom function with, always with HTTP 200 so the platform hands
// it to the model instead of retrying: the model says Wording, and never
// claims an effect unless Status is success.
type PlatformAnswer struct {
	// Status is success, warning, pending (still running, or waiting for
	// a human: nothing is confirmed yet) or error.
	Status mt.Status `json:"status"`
	// Wording is what the agent may say; for a refusal, the summary.
	Wording string  `json:"wording"`
	Summary string  `json:"summary"`
	Code    mt.Code `json:"code,omitempty"`
	// State is the invocation's state, absent for a call refused before
	// it became one.
	State        mt.InvocationState `json:"state,omitempty"`
	InvocationID string             `json:"invocation_id,omitempty"`
	ApprovalID   string             `json:"approval_id,omitempty"`
	Receipt      *mt.Receipt        `json:"receipt,omitempty"`
}

// PlatformEventResult answers a platform's end-of-call event.
type PlatformEventResult struct {
	// Handled says whether the event ended a call in maestro; events
	// maestro does not act on are acknowledged with false.
	Handled bool `json:"handled"`
	// Ended is true for the event that ended the session, false for a
	// repeat (a platform retry) or an event that ended nothing.
	Ended     bool   `json:"ended"`
	SessionID string `json:"session_id,omitempty"`
	// Detail says why nothing was done, when nothing was.
	Detail string `json:"detail,omitempty"`
}
