package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/mcp"
	"github.com/maestro-run/maestro/internal/mcp/mcptest"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// mcpConnect opens an MCP client session with the go-sdk's own client,
// sending key as the bearer token and the given extra headers.
func (e *env) mcpConnect(key string, extra http.Header) (*sdk.ClientSession, error) {
	h := http.Header{"Authorization": {"Bearer " + key}}
	for k, v := range extra {
		h[k] = v
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "maestro-test", Version: "1"}, nil)
	return client.Connect(e.ctx, &sdk.StreamableClientTransport{
		Endpoint:   e.url + mcp.Path,
		HTTPClient: &http.Client{Transport: mcptest.Headers{Header: h}, Timeout: time.Minute},
	}, nil)
}

func (e *env) mcpSession(extra http.Header) *sdk.ClientSession {
	e.t.Helper()
	cs, err := e.mcpConnect(tools.DemoAgentKey, extra)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func textsOf(res *sdk.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

func TestMCP(t *testing.T) {
	e := setup(t)
	ctx := e.ctx

	t.Run("tools/list shows the allowlist with annotations from the classes", func(t *testing.T) {
		cs := e.mcpSession(nil)
		res, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		byName := map[string]*sdk.Tool{}
		var names []string
		for _, tl := range res.Tools {
			byName[tl.Name] = tl
			names = append(names, tl.Name)
		}
		slices.Sort(names)
		require.Equal(t, []string{"create_work_order", "delete_tenant_account", "email_property_manager", "escalate_to_human",
			"issue_refund", "lookup_tenant", mcp.InvocationTool, "send_sms", "take_message"}, names)

		lookup := byName["lookup_tenant"].Annotations
		require.True(t, lookup.ReadOnlyHint)
		require.False(t, lookup.IdempotentHint, "a read's key carries the tool-call ID")

		sms := byName["send_sms"].Annotations
		require.False(t, sms.ReadOnlyHint)
		require.True(t, *sms.DestructiveHint, "irreversible")
		require.True(t, sms.IdempotentHint, "the derived key names the effect by its arguments")
		require.True(t, *sms.OpenWorldHint)

		refund := byName["issue_refund"].Annotations
		require.True(t, *refund.DestructiveHint, "money")

		wo := byName["create_work_order"].Annotations
		require.False(t, *wo.DestructiveHint, "compensable and no money")
		require.True(t, wo.IdempotentHint)

		require.False(t, *byName["take_message"].Annotations.OpenWorldHint, "record-deferred: only the ledger")

		schema, err := json.Marshal(byName["create_work_order"].InputSchema)
		require.NoError(t, err)
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		require.NoError(t, json.Unmarshal(schema, &s))
		require.Contains(t, s.Properties, "category", "the catalog's schema")
		require.Contains(t, s.Properties, mcp.SessionArg, "the session argument")
		require.NotContains(t, s.Required, mcp.SessionArg)
	})

	t.Run("tools/call runs the effect once, read back at the stand-in", func(t *testing.T) {
		cs := e.mcpSession(http.Header{mcp.SessionHeader: {e.session + "-wo"}})
		args := map[string]any{"tenant_id": "t_100", "category": "plumbing", "description": "kitchen sink leaks", "priority": "routine"}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_work_order", Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", textsOf(res))
		obs := mcptest.Observation(t, res)
		require.Equal(t, mt.StatusSuccess, obs.Status)
		require.NotNil(t, obs.Receipt)
		require.Equal(t, obs.Wording, textsOf(res)[0], "the wording is the first text")
		require.Contains(t, obs.Wording, obs.Receipt.ID)
		_, ok := e.standins.Sandbox.WorkOrder(obs.Receipt.ID)
		require.True(t, ok, "the stand-in holds work order %s", obs.Receipt.ID)
		require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders())

		// The model says it again after a barge-in: same arguments, new call.
		again, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_work_order", Arguments: args})
		require.NoError(t, err)
		require.False(t, again.IsError)
		require.Equal(t, obs.Source.InvocationID, mcptest.Observation(t, again).Source.InvocationID)
		require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders(), "one effect")
	})

	t.Run("a refusal is an error result with next actions", func(t *testing.T) {
		cs := e.mcpSession(http.Header{mcp.SessionHeader: {e.session + "-bad"}})
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lookup_tenant", Arguments: map[string]any{"tenant_id": "nobody"}})
		require.NoError(t, err)
		require.True(t, res.IsError)
		obs := mcptest.Observation(t, res)
		require.Equal(t, mt.CodeInvalidArgs, obs.Code)
		require.NotNil(t, obs.NextActions)
		require.NotEmpty(t, obs.NextActions.Remediation)

		res, err = e.mcpSession(nil).CallTool(ctx, &sdk.CallToolParams{Name: "lookup_tenant", Arguments: map[string]any{"tenant_id": "t_100"}})
		require.NoError(t, err)
		require.True(t, res.IsError, "no session named")
		require.Equal(t, mt.CodeInvalidRequest, mcptest.Observation(t, res).Code)
	})

	t.Run("a pending approval is not an error, and maestro_invocation follows it", func(t *testing.T) {
		before := e.standins.Twilio.CountMessages()
		// No header: the session comes from the argument.
		cs := e.mcpSession(nil)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "send_sms", Arguments: map[string]any{
			"to": "+15551230000", "body": "Your technician comes at 9", mcp.SessionArg: e.session + "-sms"}})
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", textsOf(res))
		obs := mcptest.Observation(t, res)
		require.Equal(t, mt.StatusPending, obs.Status)
		require.Equal(t, mt.CodeAwaitingApproval, obs.Code)
		invocation := obs.Source.InvocationID
		require.NotEmpty(t, invocation)
		require.True(t, strings.HasPrefix(obs.Source.OperationKey, e.session+"-sms:send_sms:"), obs.Source.OperationKey)
		require.Contains(t, strings.Join(textsOf(res), "\n"), invocation)
		require.Contains(t, obs.NextActions.Remediation, mcp.InvocationTool)
		require.NotContains(t, textsOf(res)[0], "sent", "the pending wording claims nothing")

		poll := func() *sdk.CallToolResult {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.InvocationTool, Arguments: map[string]any{"invocation_id": invocation}})
			require.NoError(t, err)
			return res
		}
		still := poll()
		require.False(t, still.IsError)
		require.Equal(t, mt.StatusPending, mcptest.Observation(t, still).Status)

		var approval struct {
			ApprovalID string `json:"approval_id"`
		}
		require.NoError(t, json.Unmarshal(obs.Payload, &approval))
		_, err = e.ops.Approve(ctx, approval.ApprovalID, "caller asked for it")
		require.NoError(t, err)

		var final mt.Observation
		require.Eventually(t, func() bool {
			res := poll()
			final = mcptest.Observation(t, res)
			return final.Status != mt.StatusPending
		}, time.Minute, 200*time.Millisecond)
		require.Equal(t, mt.StatusSuccess, final.Status, final.Summary)
		require.NotNil(t, final.Receipt)
		require.Equal(t, before+1, e.standins.Twilio.CountMessages())
	})

	t.Run("a missing or wrong bearer is 401", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		for name, auth := range map[string]string{"missing": "", "wrong": "Bearer not-a-key", "ops key": "Bearer " + tools.DemoOpsKey} {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+mcp.Path, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
			require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer", name)
		}
		connectCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err := (&env{ctx: connectCtx, url: e.url}).mcpConnect("not-a-key", nil)
		require.Error(t, err, "the SDK's client cannot initialize with a wrong key")
	})
}

// A call still running when the API's wait ends is a pending, non-error
// answer that claims nothing; maestro_invocation then reads how it ended.
func TestMCPCallPastTheWaitIsPending(t *testing.T) {
	e := setup(t, func(o *options) { o.waitTimeout = time.Second })
	e.standins.Sandbox.Faults().DelayNext(1, 3*time.Second)
	cs := e.mcpSession(http.Header{mcp.SessionHeader: {e.session}})
	res, err := cs.CallTool(e.ctx, &sdk.CallToolParams{Name: "create_work_order", Arguments: map[string]any{
		"tenant_id": "t_100", "category": "hvac", "description": "no heat", "priority": "urgent"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", textsOf(res))
	obs := mcptest.Observation(t, res)
	require.Equal(t, mt.StatusPending, obs.Status)
	require.Equal(t, mt.CodeInProgress, obs.Code)
	require.Nil(t, obs.Receipt)
	invocation := obs.Source.InvocationID
	require.Contains(t, textsOf(res)[1], invocation)

	var final mt.Observation
	require.Eventually(t, func() bool {
		res, err := cs.CallTool(e.ctx, &sdk.CallToolParams{Name: mcp.InvocationTool, Arguments: map[string]any{"invocation_id": invocation}})
		require.NoError(t, err)
		final = mcptest.Observation(t, res)
		return final.Status != mt.StatusPending
	}, time.Minute, 200*time.Millisecond)
	require.Equal(t, mt.StatusSuccess, final.Status, final.Summary)
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders())
}

// An MCP session lives in the process that opened it; the maestro session
// a call names (X-Call-Id or session_id) lives in the ledger. A request
// carrying another process's Mcp-Session-Id is answered 404, on which the
// spec has the client initialize again; its calls on the new process then
// find the same maestro session, and run no effect twice.
func TestMCPSessionOnAnotherProcess(t *testing.T) {
	t.Parallel()
	a := setup(t)
	b := setup(t, alongside(a))
	call := http.Header{mcp.SessionHeader: {a.session}}
	args := map[string]any{"tenant_id": "t_100", "category": "plumbing", "description": "kitchen sink leaks", "priority": "routine"}

	onA := a.mcpSession(call)
	res, err := onA.CallTool(a.ctx, &sdk.CallToolParams{Name: "create_work_order", Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", textsOf(res))
	first := mcptest.Observation(t, res)
	require.NotEmpty(t, onA.ID(), "the process keeps an MCP session")

	// The next request of that session lands on the other process.
	req, err := http.NewRequestWithContext(b.ctx, http.MethodPost, b.url+mcp.Path,
		strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tools.DemoAgentKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", onA.ID())
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "the other process does not know the MCP session")

	onB := b.mcpSession(call)
	listed, err := onB.ListTools(b.ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, listed.Tools)
	again, err := onB.CallTool(b.ctx, &sdk.CallToolParams{Name: "create_work_order", Arguments: args})
	require.NoError(t, err)
	require.False(t, again.IsError, "%v", textsOf(again))
	require.Equal(t, first.Source.InvocationID, mcptest.Observation(t, again).Source.InvocationID, "the same maestro session and call")
	require.Equal(t, 1, a.standins.Sandbox.CountWorkOrders(), "one effect")
}
