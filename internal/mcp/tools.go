package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// SessionHeader names the session (the call) a tool call belongs to. Vapi
// sends it on every MCP request of a call.
const SessionHeader = "X-Call-Id"

// SessionArg is the argument that names the session when no SessionHeader
// is sent. Every tool advertises it, except one whose own input schema
// already has an argument of that name: that argument stays the tool's,
// and its calls need the header.
const SessionArg = "session_id"

// InvocationTool reads an invocation by ID: how a client hears the end of
// a call it was told is pending.
const InvocationTool = "maestro_invocation"

const sessionArgDescription = "The call or conversation this action belongs to. Leave it out when the client sends the " +
	SessionHeader + " header, which wins over this argument."

// newServer builds the MCP server an agent's key reaches: the agent's
// allowlist, and the invocation reader.
func (h *Handler) newServer(agent *tools.Agent) (*sdk.Server, error) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "maestro", Title: "maestro", Version: "1"}, &sdk.ServerOptions{
		Instructions: "Tools run through maestro: each answer's text is what you may tell the person, " +
			"and structuredContent is the full observation. A pending answer names an invocation_id; " +
			"read how it ended with " + InvocationTool + ". Send the call's ID in the " + SessionHeader +
			" header, or as " + SessionArg + ".",
		Logger: h.cfg.Logger,
		// Each agent key lists its own tools: no cache may share a list.
		SetCacheable: func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) { c.CacheScope = "private" },
	})
	for _, t := range h.cfg.Catalog.Load().Tools() {
		if !agent.Allows(t.Name) {
			continue
		}
		if t.Name == InvocationTool {
			return nil, fmt.Errorf("mcp: catalog tool %q clashes with the MCP endpoint's own tool of that name", t.Name)
		}
		def, ownsSessionArg, err := toolDef(t)
		if err != nil {
			return nil, err
		}
		srv.AddTool(def, h.callTool(t, ownsSessionArg))
	}
	srv.AddTool(invocationToolDef(), h.readInvocation)
	return srv, nil
}

// toolDef is a catalog tool as MCP lists it. ownsSessionArg reports that
// the tool's own schema has an argument named SessionArg.
func toolDef(t *tools.Tool) (def *sdk.Tool, ownsSessionArg bool, err error) {
	var schema map[string]any
	if err := json.Unmarshal(t.InputSchema.JSON(), &schema); err != nil {
		return nil, false, fmt.Errorf("mcp: error decoding the input schema of %s: %w", t.Name, err)
	}
	props, _ := schema["properties"].(map[string]any)
	if _, ok := props[SessionArg]; ok {
		ownsSessionArg = true
	} else {
		if props == nil {
			props = map[string]any{}
			schema["properties"] = props
		}
		props[SessionArg] = map[string]any{"type": "string", "minLength": 1, "description": sessionArgDescription}
	}
	return &sdk.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: schema,
		Annotations: annotations(t),
	}, ownsSessionArg, nil
}

// annotations derive MCP's hints from the catalog's classes.
func annotations(t *tools.Tool) *sdk.ToolAnnotations {
	read := t.Effect == mt.EffectRead
	return &sdk.ToolAnnotations{
		ReadOnlyHint: read,
		// An effect nobody can undo, or one that moves money.
		DestructiveHint: ptr(!read && (t.Reversibility == mt.ReversibilityIrreversible || t.Effect == mt.EffectMoney)),
		// The derived operation key names the effect by session, tool and
		// arguments, so the same call again returns the first one's
		// answer; a repeatable tool's key also carries a per-call ID.
		IdempotentHint: !read && !t.Repeatable,
		// A tool that only records intent touches maestro's ledger alone;
		// every other one reaches a provider.
		OpenWorldHint: ptr(t.Delivery != mt.DeliveryRecordDeferred),
	}
}

func invocationToolDef() *sdk.Tool {
	return &sdk.Tool{
		Name: InvocationTool,
		Description: "Read how an earlier call ended, by the invocation_id its pending answer named. " +
			"Call it after the seconds that answer said; it never runs anything.",
		InputSchema: map[string]any{
			"type":                 "object",
			"additionalProperties": false,
			"required":             []string{"invocation_id"},
			"properties": map[string]any{
				"invocation_id": map[string]any{"type": "string", "minLength": 1, "description": "the invocation_id a pending answer named"},
			},
		},
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}
}

func ptr[T any](v T) *T { return &v }
