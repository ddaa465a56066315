package api

import (
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/platform"
	"github.com/maestro-run/maestro/tools"
)

// checkPlatformIDs holds the platform's call ID, maestro's session ID, and
// the tool-call ID, when there is one, to the rule every entry point
// keeps, before anything about the call is recorded. Real platforms send
// UUID-like IDs, which the rule admits. The refusal names the field as the
// platform's documents do.
func checkPlatformIDs(kind tools.PlatformKind, call platform.Call, tc *platform.ToolCall) *apitype.Refusal {
	callField, toolCallField := "call ID", "tool_call_id"
	switch kind {
	case tools.PlatformVapi:
		callField, toolCallField = "message.call.id", "toolCallList[].id"
	case tools.PlatformElevenLabs:
		callField = "conversation_id"
	case tools.PlatformRetell:
		callField = "call.call_id"
	}
	if ref := admission.CheckIdentifier(callField, call.ID); ref != nil {
		return ref
	}
	if tc != nil && tc.ID != "" {
		return admission.CheckIdentifier(toolCallField, tc.ID)
	}
	return nil
}
