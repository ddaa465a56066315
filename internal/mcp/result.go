package mcp

import (
	"encoding/json"
	"errors"
	"math"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// result turns the API's answer into an MCP tool result: the observation
// as structuredContent, its wording (or summary) as the first text, and the
// observation's JSON as the second, for clients that read text only.
// Refusals and failures are errors; a pending call is not, and names the
// invocation to poll with InvocationTool.
func (h *Handler) result(resp apiclient.Response, err error) *sdk.CallToolResult {
	var refused *apiclient.Error
	switch {
	case errors.As(err, &refused):
		return problemResult(refused.Observation)
	case err != nil:
		h.cfg.Logger.Error("MCP tool call could not reach the API", "err", err)
		return problemResult(internalError())
	}
	obs := resp.Observation
	if resp.Pending {
		obs = withPollStep(obs, resp.InvocationID, int(math.Ceil(resp.RetryAfter.Seconds())))
		return build(obs, false, say(obs), pendingLine(obs, resp.InvocationID))
	}
	var followUp string
	if resp.FollowUp != nil {
		followUp = "Follow-up: " + say(*resp.FollowUp)
	}
	if obs.Status == mt.StatusError {
		return build(obs, true, say(obs), followUp)
	}
	return build(obs, false, say(obs), followUp)
}

// problemResult is an error result for an observation maestro refused with.
func problemResult(obs mt.Observation) *sdk.CallToolResult {
	return build(obs, true, say(obs))
}

// build assembles a result: the given texts (empty ones left out), then
// the observation's JSON.
func build(obs mt.Observation, isError bool, texts ...string) *sdk.CallToolResult {
	raw, err := json.Marshal(obs)
	if err != nil {
		raw = []byte(`{}`)
	}
	var content []sdk.Content
	for _, t := range texts {
		if t != "" {
			content = append(content, &sdk.TextContent{Text: t})
		}
	}
	return &sdk.CallToolResult{
		Content:           append(content, &sdk.TextContent{Text: string(raw)}),
		StructuredContent: json.RawMessage(raw),
		IsError:           isError,
	}
}

// say is what an observation lets the agent tell the person: its wording,
// or its summary when it has none.
func say(obs mt.Observation) string {
	if obs.Wording != "" {
		return obs.Wording
	}
	return obs.Summary
}

func pendingLine(obs mt.Observation, invocationID string) string {
	line := "Pending (" + string(obs.Code) + "), invocation_id " + invocationID + ": nothing is confirmed yet."
	if obs.NextActions != nil {
		line += " " + obs.NextActions.Remediation
	}
	return line
}

// withPollStep points a pending observation's remediation at the
// invocation reader instead of the HTTP route an API client polls.
func withPollStep(obs mt.Observation, invocationID string, afterSeconds int) mt.Observation {
	if afterSeconds < 1 {
		afterSeconds = 1
	}
	na := mt.NextActions{}
	if obs.NextActions != nil {
		na = *obs.NextActions
	}
	na.Remediation = pollStep(invocationID, afterSeconds)
	obs.NextActions = &na
	return obs
}

func internalError() mt.Observation {
	return observation.Error(observation.Failure{
		Code:          mt.CodeInternal,
		Summary:       "maestro could not finish admitting or answering the call",
		RootCause:     "An internal error, logged by the server.",
		Remediation:   "Call again with the same arguments: it is safe, never runs the effect twice, and picks up where this attempt stopped.",
		StopCondition: "Stop after three failures and hand over to a human.",
	}, &mt.Source{System: "maestro"})
}
