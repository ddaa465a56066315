package admission

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func refuse(status int, f observation.Failure) *apitype.Refusal {
	return &apitype.Refusal{HTTPStatus: status, Observation: observation.Error(f, &mt.Source{System: "maestro"})}
}

func refuseUnauthorized() *apitype.Refusal {
	return refuse(http.StatusUnauthorized, observation.Failure{
		Code:          mt.CodeUnauthorized,
		Summary:       "The caller is not a known agent",
		RootCause:     "The request's credentials map to no agent in the catalog.",
		Remediation:   "Send Authorization: Bearer <agent key> with a key issued for this agent.",
		StopCondition: "Do not retry with the same key.",
	})
}

func refuseUnknownTool(name string) *apitype.Refusal {
	return refuse(http.StatusNotFound, observation.Failure{
		Code:          mt.CodeUnknownTool,
		Summary:       fmt.Sprintf("There is no tool named %q; nothing was run", name),
		RootCause:     "Tools absent from the catalog never run (deny by default).",
		Remediation:   "List the tools you may use with GET /v1/tools and call one of those.",
		StopCondition: "Do not retry this tool name.",
		Wording:       "I'm not able to do that from here.",
	})
}

func refuseNotAllowed(name, agent string) *apitype.Refusal {
	return refuse(http.StatusForbidden, observation.Failure{
		Code:          mt.CodeToolNotAllowed,
		Summary:       fmt.Sprintf("Agent %s may not use %s; nothing was run", agent, name),
		RootCause:     "The tool is not in this agent's allowlist (deny by default).",
		Remediation:   "Use a tool from GET /v1/tools, or hand over to a human.",
		StopCondition: "Do not retry this tool.",
		Wording:       "I'm not able to do that from here, but I can pass it to the team.",
	})
}

func refuseCanaryRed(name string) *apitype.Refusal {
	return refuse(http.StatusServiceUnavailable, observation.Failure{
		Code:          mt.CodeCanaryRed,
		Summary:       fmt.Sprintf("%s is withheld: its reality canary last failed; nothing was run", name),
		RootCause:     "The tool requires a green canary, and the last canary run could not confirm its effect at the provider.",
		Remediation:   "Hand over to a human, or use another tool from GET /v1/tools; the tool returns once a canary run passes.",
		StopCondition: "Do not retry this tool in this conversation.",
		Wording:       "I'm not able to do that right now, but I can pass it to the team.",
	})
}

func refuseInvalidArgs(tool *tools.Tool, err error) *apitype.Refusal {
	f := observation.Failure{
		Code:          mt.CodeInvalidArgs,
		Summary:       fmt.Sprintf("Arguments for %s are invalid; nothing was run", tool.Name),
		RootCause:     err.Error(),
		Remediation:   "Fix the fields named below and call again.",
		StopCondition: "Stop after two invalid attempts and ask the person for the missing details.",
	}
	var ae *tools.ArgsError
	if errors.As(err, &ae) {
		f.Payload = map[string]any{"violations": ae.Violations}
		if len(ae.Violations) > 0 {
			v := ae.Violations[0]
			f.Remediation = fmt.Sprintf("Fix %s: %s", v.Field, v.Hint)
		}
	}
	return refuse(http.StatusUnprocessableEntity, f)
}

func refuseKeyReused(key string, existing ledger.Invocation) *apitype.Refusal {
	return refuse(http.StatusConflict, observation.Failure{
		Code:          mt.CodeKeyReused,
		Summary:       fmt.Sprintf("Operation key %q was already used with other arguments; nothing was run", key),
		RootCause:     fmt.Sprintf("The key names invocation %s of %s with different arguments.", existing.ID, existing.Tool),
		Remediation:   "Use a new operation key for a different effect, or resend the original arguments to get the original result.",
		StopCondition: "Do not retry with this key and these arguments.",
	})
}

func refuseBadRequest(msg string) *apitype.Refusal {
	return refuse(http.StatusBadRequest, observation.Failure{
		Code:          mt.CodeInvalidRequest,
		Summary:       "The request is malformed; nothing was run",
		RootCause:     msg,
		Remediation:   "Fix the request body as described and send it again.",
		StopCondition: "Stop if the corrected request is refused again.",
	})
}

// refuseKeyMissing answers a call to a read or a repeatable tool that
// names neither its effect nor its tool call: identical arguments may
// legitimately come again, so no key derived from them alone tells one
// call from the next.
func refuseKeyMissing(tool *tools.Tool) *apitype.Refusal {
	why := "is a read, and a later lookup must not be answered with an earlier result"
	if tool.Effect != mt.EffectRead {
		why = "is repeatable: identical arguments may legitimately take effect again"
	}
	return refuse(http.StatusBadRequest, observation.Failure{
		Code:          mt.CodeInvalidRequest,
		Summary:       fmt.Sprintf("operation_key or tool_call_id is required to call %s; nothing was run", tool.Name),
		RootCause:     fmt.Sprintf("%s %s, so its operation key is derived from the tool_call_id, and the request gave neither that nor an operation_key.", tool.Name, why),
		Remediation:   "Send the call again with the model's tool_call_id, or with an operation_key naming this call.",
		StopCondition: "Stop if the call is refused again with one of them set.",
		Payload:       map[string]any{"missing": []string{"operation_key", "tool_call_id"}},
	})
}

// BadRequest builds the refusal the HTTP layer uses for bodies that never
// reach the gate (malformed JSON, wrong content type, oversized bodies).
func BadRequest(status int, code mt.Code, msg string) *apitype.Refusal {
	r := refuseBadRequest(msg)
	r.HTTPStatus = status
	r.Observation.Code = code
	return r
}

func refuseSessionHalted(s ledger.Session) *apitype.Refusal {
	return refuse(http.StatusConflict, observation.Failure{
		Code:          mt.CodeSessionHalted,
		Summary:       fmt.Sprintf("Session %s is halted; nothing was run", s.ID),
		RootCause:     fmt.Sprintf("The session halted at %s: %s", s.HaltStep, s.HaltReason),
		Remediation:   "Tell the person a team member will follow up; an operator must resolve the session first.",
		StopCondition: "Make no more calls in this session until it is resolved.",
		Wording:       "I need to hand this to a team member before I can do anything else.",
	})
}

func refuseSessionAwaitingApproval(sessionID string, w approval.Awaited) *apitype.Refusal {
	return refuse(http.StatusConflict, observation.Failure{
		Code:    mt.CodeSessionAwaitingApproval,
		Summary: fmt.Sprintf("Session %s is waiting for a human to decide %s (approval %s); this write was not run", sessionID, w.Tool, w.ApprovalID),
		RootCause: "While an irreversible or money call waits for approval, the session makes no other writes: " +
			"the approver decides on the session as it stands.",
		Remediation:   "Tell the person this is waiting on the pending request; lookups still work. Call again once the pending call has an outcome.",
		StopCondition: "Do not retry this write until approval " + w.ApprovalID + " is decided.",
		Wording:       "I need to wait for a team member to approve the earlier request before I can do that.",
		Payload:       map[string]any{"awaiting_approval_id": w.ApprovalID, "awaiting_tool": w.Tool, "awaiting_invocation_id": w.InvocationID},
	})
}

func refuseSessionRollingBack(s ledger.Session) *apitype.Refusal {
	return refuse(http.StatusConflict, observation.Failure{
		Code:          mt.CodeSessionRollingBack,
		Summary:       fmt.Sprintf("Session %s is being rolled back; nothing was run", s.ID),
		RootCause:     "A rollback closes the session to new writes before it undoes what was done; lookups still work.",
		Remediation:   "Tell the person the earlier requests are being undone; ask again once the rollback has finished if they still want this.",
		StopCondition: "Do not retry this write until the rollback has finished.",
		Wording:       "I'm undoing the earlier requests now, so I haven't done that.",
		Payload:       map[string]any{"session_state": mt.SessionRollingBack, "session_id": s.ID},
	})
}

func refuseSessionEnded(s ledger.Session) *apitype.Refusal {
	return refuse(http.StatusConflict, observation.Failure{
		Code:          mt.CodeSessionEnded,
		Summary:       fmt.Sprintf("Session %s has ended; nothing was run", s.ID),
		RootCause:     "Calls after the call-ended signal belong to the post-call workflow.",
		Remediation:   "Start a new session for a new conversation.",
		StopCondition: "Do not retry in this session.",
	})
}

// RefuseSessionForbidden refuses an agent acting on a session another agent
// opened. It says only that the session is not the caller's: the owner's
// identity is not the caller's business.
func RefuseSessionForbidden(sessionID string) *apitype.Refusal {
	return refuse(http.StatusForbidden, observation.Failure{
		Code:          mt.CodeSessionForbidden,
		Summary:       fmt.Sprintf("Session %s belongs to another agent; nothing was run", sessionID),
		RootCause:     "A session belongs to the agent that opened it; no other agent may call, end, roll back or read it.",
		Remediation:   "Use a session ID this agent opened, or start a new session with a fresh ID.",
		StopCondition: "Do not retry with this session ID.",
	})
}
