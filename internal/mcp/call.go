package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// apiBase is the base URL of the in-process API; it never reaches a socket.
const apiBase = "http://maestro.internal"

// client is the API's typed client acting with the caller's agent key.
func (h *Handler) client(req *sdk.CallToolRequest) *apiclient.Client {
	key := ""
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		key, _ = req.Extra.TokenInfo.Extra[keyExtra].(string)
	}
	return apiclient.New(apiBase, key, apiclient.Options{HTTPClient: h.api})
}

// callTool runs a catalog tool as POST /v1/invocations does. The operation
// key is left to admission to derive (session, tool, canonical arguments),
// so a call re-issued after a barge-in names the same effect; each call
// gets its own tool-call ID, which joins the key only for reads and
// repeatable tools.
func (h *Handler) callTool(t *tools.Tool, ownsSessionArg bool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args, argSession, ref := splitArgs(req.Params.Arguments, ownsSessionArg)
		if ref != nil {
			return problemResult(*ref), nil
		}
		session := argSession
		if req.Extra != nil && req.Extra.Header.Get(SessionHeader) != "" {
			session = req.Extra.Header.Get(SessionHeader)
		}
		if session == "" {
			h.cfg.Logger.Info("MCP call refused: no session", "tool", t.Name)
			return problemResult(noSession(t.Name, ownsSessionArg)), nil
		}
		resp, err := h.client(req).Invoke(ctx, apitype.InvokeRequest{
			SessionID:  session,
			Tool:       t.Name,
			Args:       args,
			ToolCallID: newToolCallID(),
		})
		return h.result(resp, err), nil
	}
}

// readInvocation serves the invocation reader.
func (h *Handler) readInvocation(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var in struct {
		InvocationID string `json:"invocation_id"`
	}
	dec := json.NewDecoder(bytes.NewReader(orEmpty(req.Params.Arguments)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.InvocationID == "" {
		return problemResult(badRequest(mt.CodeInvalidArgs, InvocationTool+` takes one argument, {"invocation_id": "<the ID a pending answer named>"}`)), nil
	}
	resp, err := h.client(req).Invocation(ctx, in.InvocationID)
	return h.result(resp, err), nil
}

// splitArgs takes the session argument out of a call's arguments, leaving
// the tool's own. Arguments that are not an object go to admission as they
// are, to be refused there with the schema's explanation.
func splitArgs(raw json.RawMessage, ownsSessionArg bool) (args json.RawMessage, session string, ref *mt.Observation) {
	raw = orEmpty(raw)
	var fields map[string]json.RawMessage
	if ownsSessionArg || json.Unmarshal(raw, &fields) != nil || fields == nil {
		return raw, "", nil
	}
	v, ok := fields[SessionArg]
	if !ok {
		return raw, "", nil
	}
	if err := json.Unmarshal(v, &session); err != nil {
		o := badRequest(mt.CodeInvalidArgs, SessionArg+" must be a string: the ID of the call this action belongs to")
		return nil, "", &o
	}
	delete(fields, SessionArg)
	args, err := json.Marshal(fields)
	if err != nil {
		o := badRequest(mt.CodeInvalidArgs, "the arguments could not be re-encoded: "+err.Error())
		return nil, "", &o
	}
	return args, session, nil
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return json.RawMessage(`{}`)
	}
	return raw
}

func noSession(tool string, ownsSessionArg bool) mt.Observation {
	how := "send the " + SessionHeader + " header with the call's ID, or give the " + SessionArg + " argument"
	if ownsSessionArg {
		how = "send the " + SessionHeader + " header with the call's ID (" + tool + "'s own " + SessionArg + " argument is one of its arguments)"
	}
	return observation.Error(observation.Failure{
		Code:          mt.CodeInvalidRequest,
		Summary:       "no session: every call belongs to a call or conversation, and this one named none; nothing was run",
		RootCause:     "The MCP request carried no " + SessionHeader + " header and no " + SessionArg + " argument.",
		Remediation:   "Call again and " + how + ".",
		StopCondition: "Stop if the same call is refused twice, and hand over to a human.",
	}, &mt.Source{System: "maestro", Tool: tool})
}

func badRequest(code mt.Code, summary string) mt.Observation {
	return observation.Error(observation.Failure{
		Code:          code,
		Summary:       summary + "; nothing was run",
		RootCause:     "The call's arguments did not have the shape the tool's input schema lists.",
		Remediation:   "Fix the arguments as the summary says and call again.",
		StopCondition: "Stop if the same call is refused twice, and hand over to a human.",
	}, &mt.Source{System: "maestro"})
}

// newToolCallID names one MCP tool call; MCP carries no ID of its own that
// outlives the request.
func newToolCallID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "mcp-" + hex.EncodeToString(b)
}

// pollStep is what a pending answer tells an MCP client to do next.
func pollStep(invocationID string, afterSeconds int) string {
	return fmt.Sprintf("Tell the person what the wording says, then call %s with {\"invocation_id\": %q} after %d seconds.",
		InvocationTool, invocationID, afterSeconds)
}
