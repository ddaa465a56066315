package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/mcp"
	"github.com/maestro-run/maestro/internal/mcp/mcptest"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// hostileIDs break the identifier rule: each is refused wherever an agent,
// a platform or an operator names a session, an operation or a call.
var hostileIDs = map[string]string{
	"path traversal":      "x/../../approvals/a/approve?",
	"backslash":           `x\..\approvals`,
	"space":               "call 1",
	"newline":             "call\n1",
	"NUL":                 "call\x001",
	"DEL":                 "call\x7f",
	"non-ASCII":           "caf\u00e9",
	"dot-dot":             "..",
	"1,200 characters":    strings.Repeat("k", 1200),
	"5,000 characters":    strings.Repeat("k", 5000),
	"201 characters":      strings.Repeat("k", mt.MaxIdentifierLen+1),
	"percent-encoded '/'": "x%2F..%2F/approvals",
}

// admittedIDs keep the rule, however they look: '?', '#' and '%' are
// printable and change no path once the console and the clients escape
// them, and platforms send UUID-like IDs.
var admittedIDs = map[string]string{
	"question mark":   "a?b",
	"hash":            "a#b",
	"percent-encoded": "x%2F..%2F..%2Fapprovals%2Fa%2Fapprove%3F",
	"UUID":            "3f2c1b7e-8a4d-4c1e-9b7a-1d2e3f4a5b6c",
	"200 characters":  strings.Repeat("k", mt.MaxIdentifierLen),
}

// startWatch sees every workflow start the process asks of Temporal and,
// while failSessions is set, refuses the start of session workflows as an
// unreachable or refusing frontend would.
type startWatch struct {
	interceptor.ClientInterceptorBase
	mu           sync.Mutex
	started      []string
	failSessions bool
}

func (w *startWatch) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &startWatchOutbound{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}, w: w}
}

func (w *startWatch) setFailSessions(fail bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failSessions = fail
}

// startsOf lists the workflow IDs started that contain s.
func (w *startWatch) startsOf(s string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, id := range w.started {
		if strings.Contains(id, s) {
			out = append(out, id)
		}
	}
	return out
}

type startWatchOutbound struct {
	interceptor.ClientOutboundInterceptorBase
	w *startWatch
}

func (o *startWatchOutbound) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	o.w.mu.Lock()
	o.w.started = append(o.w.started, in.Options.ID)
	fail := o.w.failSessions && strings.HasPrefix(in.Options.ID, "session/")
	o.w.mu.Unlock()
	if fail {
		return nil, errors.New("injected: the session workflow cannot be started")
	}
	return o.Next.ExecuteWorkflow(ctx, in)
}

func withStartWatch(w *startWatch) func(*options) {
	return func(o *options) { o.interceptors = []interceptor.ClientInterceptor{w} }
}

// requireIdentifierRefusal asserts a refusal names the field and the rule.
func requireIdentifierRefusal(t *testing.T, obs mt.Observation, field string) {
	t.Helper()
	require.Equal(t, mt.CodeInvalidRequest, obs.Code)
	require.Contains(t, obs.Summary, field+" is not a valid identifier")
	require.NotNil(t, obs.NextActions)
	require.Contains(t, obs.NextActions.Remediation, mt.IdentifierRule)
}

// requireNoTrace asserts nothing of a refused call was kept: no session
// row, no invocation, no workflow, no effect at the stand-ins.
func (e *env) requireNoTrace(t *testing.T, w *startWatch, sessionID string) {
	t.Helper()
	// PostgreSQL cannot hold a NUL in text, so it cannot have kept one.
	if !strings.ContainsRune(sessionID, 0) {
		_, err := e.store.SessionGet(e.ctx, sessionID)
		require.ErrorIs(t, err, ledger.ErrNotFound, "no session row for %.40q", sessionID)
		invs, err := e.store.InvocationListBySession(e.ctx, sessionID)
		require.NoError(t, err)
		require.Empty(t, invs, "no invocation for %.40q", sessionID)
	}
	if sessionID != "" {
		require.Empty(t, w.startsOf(sessionID), "no workflow for %.40q", sessionID)
	}
	require.Zero(t, e.standins.Sandbox.CountWorkOrders(), "no work order")
	require.Zero(t, e.standins.Twilio.CountMessages(), "no SMS")
}

const workOrderArgs = `{"tenant_id":"t_100","category":"plumbing","description":"The kitchen tap drips.","priority":"routine"}`

// Every identifier an agent sends to POST /v1/invocations is held to the
// rule before anything is recorded or started, and every session route
// refuses a session ID outside it.
func TestIdentifierRuleAtTheAPI(t *testing.T) {
	t.Parallel()
	w := &startWatch{}
	e := setup(t, withStartWatch(w))
	invoke := func(req apitype.InvokeRequest) error {
		req.Tool, req.Args = "create_work_order", json.RawMessage(workOrderArgs)
		_, err := e.agent.Invoke(e.ctx, req)
		return err
	}
	refused := func(t *testing.T, err error, field string) {
		t.Helper()
		var ref *apiclient.Error
		require.ErrorAs(t, err, &ref)
		require.Equal(t, http.StatusBadRequest, ref.StatusCode)
		requireIdentifierRefusal(t, ref.Observation, field)
	}
	cases := map[string]string{"empty": ""}
	for name, id := range hostileIDs {
		cases[name] = id
	}
	for name, id := range cases {
		t.Run(name, func(t *testing.T) {
			refused(t, invoke(apitype.InvokeRequest{SessionID: id}), "session_id")
			e.requireNoTrace(t, w, id)

			// A good session with a bad key or tool-call ID: not even the
			// session is recorded.
			session := "call-" + randomID()
			if id != "" {
				refused(t, invoke(apitype.InvokeRequest{SessionID: session, OperationKey: id}), "operation_key")
				refused(t, invoke(apitype.InvokeRequest{SessionID: session, ToolCallID: id}), "tool_call_id")
			}
			e.requireNoTrace(t, w, session)
			// A path segment of ".." names no session: URL resolution
			// takes it away before any route sees it.
			if id == "" || id == ".." {
				return
			}

			_, err := e.ops.Session(e.ctx, id)
			refused(t, err, "session_id")
			_, err = e.agent.End(e.ctx, id, apitype.EndRequest{})
			refused(t, err, "session_id")
			_, err = e.agent.Rollback(e.ctx, id, "test")
			refused(t, err, "session_id")
			_, err = e.ops.SetFact(e.ctx, id, "caller_number", "+14155550100")
			refused(t, err, "session_id")
			_, err = e.ops.Resolve(e.ctx, id, "test")
			refused(t, err, "session_id")
			e.requireNoTrace(t, w, id)
		})
	}
	refusals, err := e.store.RefusalList(e.ctx, 500)
	require.NoError(t, err)
	require.NotEmpty(t, refusals, "operators see the refusals")
	for _, r := range refusals {
		if r.SessionID != "" {
			require.NoError(t, mt.CheckIdentifier("session_id", r.SessionID), "a refused identifier is not logged as it came")
		}
		if r.OperationKey != "" {
			require.NoError(t, mt.CheckIdentifier("operation_key", r.OperationKey), "a refused identifier is not logged as it came")
		}
	}
}

// IDs that keep the rule work end to end, whatever characters they hold,
// and the session they name is found again through its escaped path.
func TestIdentifierRuleAdmits(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for name, id := range admittedIDs {
		t.Run(name, func(t *testing.T) {
			// Unique, as the tests share one Temporal.
			id = (randomID() + id)[:min(len(id)+12, mt.MaxIdentifierLen)]
			resp, err := e.agent.Invoke(e.ctx, apitype.InvokeRequest{SessionID: id, Tool: "lookup_tenant",
				ToolCallID: id, Args: json.RawMessage(`{"tenant_id":"t_100"}`)})
			require.NoError(t, err)
			require.Equal(t, mt.StatusSuccess, resp.Observation.Status)
			require.LessOrEqual(t, len(resp.OperationKey), mt.MaxIdentifierLen, "a derived key stays within the rule")
			require.NoError(t, mt.CheckIdentifier("operation_key", resp.OperationKey))
			sess, err := e.ops.Session(e.ctx, id)
			require.NoError(t, err)
			require.Equal(t, id, sess.SessionID)
			require.Len(t, sess.Calls, 1)
		})
	}
}

// A session whose workflow cannot be started takes no call: nothing is
// recorded and no effect runs, the agent is told to send the call again,
// and the session cannot be ended while its workflow is missing. Once
// Temporal starts it, the same call runs once and rolls back.
func TestSessionStartFailureRunsNothing(t *testing.T) {
	t.Parallel()
	w := &startWatch{failSessions: true}
	e := setup(t, withStartWatch(w))
	req := invokeRequest(e.session, "create_work_order", e.key("wo"), workOrderArgs)

	_, err := e.agent.Invoke(e.ctx, req)
	var ref *apiclient.Error
	require.ErrorAs(t, err, &ref)
	require.Equal(t, http.StatusServiceUnavailable, ref.StatusCode)
	require.Equal(t, mt.CodeInternal, ref.Observation.Code)
	require.Contains(t, ref.Observation.Summary, "could not be started")
	require.Contains(t, ref.Observation.Summary, "nothing was run")
	require.Zero(t, e.standins.Sandbox.CountWorkOrders(), "no effect")
	_, err = e.store.InvocationGetByKey(e.ctx, e.key("wo"))
	require.ErrorIs(t, err, ledger.ErrNotFound, "the call is not recorded")
	require.Empty(t, w.startsOf("invocation/"), "no invocation workflow")

	_, err = e.agent.End(e.ctx, e.session, apitype.EndRequest{})
	require.ErrorAs(t, err, &ref)
	require.Equal(t, http.StatusServiceUnavailable, ref.StatusCode, "an end its workflow cannot receive is not recorded")
	sess, err := e.store.SessionGet(e.ctx, e.session)
	require.NoError(t, err)
	require.Nil(t, sess.EndedAt, "the session is not ended")
	require.Empty(t, e.owedSignals(), "no call-ended is owed to a workflow that never started")

	w.setFailSessions(false)
	resp, err := e.agent.Invoke(e.ctx, req)
	require.NoError(t, err)
	require.Equal(t, mt.StatusSuccess, resp.Observation.Status)
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders())
	rb, err := e.agent.Rollback(e.ctx, e.session, "caller changed their mind")
	require.NoError(t, err)
	require.False(t, rb.Halted)
	require.Len(t, rb.Steps, 1)
	wo, ok := e.standins.Sandbox.WorkOrder(resp.Observation.Receipt.ID)
	require.True(t, ok)
	require.Equal(t, "cancelled", wo.Status, "the effect is undone")

	end, err := e.agent.End(e.ctx, e.session, apitype.EndRequest{})
	require.NoError(t, err)
	require.True(t, end.Ended)
	e.waitPostCall() // the call-ended signal reached the session's workflow
}

// MCP: the session argument is held to the rule like session_id.
func TestIdentifierRuleAtMCP(t *testing.T) {
	t.Parallel()
	w := &startWatch{}
	e := setup(t, withStartWatch(w))
	cs := e.mcpSession(nil)
	for name, id := range hostileIDs {
		t.Run(name, func(t *testing.T) {
			var args map[string]any
			require.NoError(t, json.Unmarshal([]byte(workOrderArgs), &args))
			args[mcp.SessionArg] = id
			res, err := cs.CallTool(e.ctx, &sdk.CallToolParams{Name: "create_work_order", Arguments: args})
			require.NoError(t, err)
			require.True(t, res.IsError)
			requireIdentifierRefusal(t, mcptest.Observation(t, res), "session_id")
			e.requireNoTrace(t, w, id)
		})
	}
}

// Every platform adapter holds the platform's call ID (and Vapi's
// tool-call ID) to the rule: a tool call is answered with the refusal for
// the model to read, an end-of-call event with a 400, and neither records
// a session or starts a workflow. Real platforms' UUID-like IDs pass.
func TestIdentifierRuleAtPlatforms(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			w := &startWatch{}
			e := setup(t, withPlatforms(roomyBudget), withStartWatch(w))
			secret := platformEnv[d.env]
			at := time.Now()
			for name, id := range hostileIDs {
				at = at.Add(time.Millisecond)
				status, body := send(t, d.tool(e, secret, at, id, "call_1", "send_sms", smsToCaller))
				require.Equal(t, http.StatusOK, status, "%s: %s", name, body)
				got := d.read(t, body)
				require.True(t, got.err, "%s: %s", name, got.text)
				require.Contains(t, got.text, "is not a valid identifier", name)

				status, body = send(t, d.end(e, secret, at, id))
				require.Equal(t, http.StatusBadRequest, status, "%s: %s", name, body)
				var ref apitype.Refusal
				require.NoError(t, json.Unmarshal(body, &ref))
				require.Equal(t, mt.CodeInvalidRequest, ref.Observation.Code, name)
				e.requireNoTrace(t, w, id)
			}
			if d.name == "vapi" {
				for name, id := range hostileIDs {
					at = at.Add(time.Millisecond)
					got := d.read(t, sendOK(t, d.tool(e, secret, at, e.session, id, "send_sms", smsToCaller)))
					require.True(t, got.err, "%s: %s", name, got.text)
					require.Contains(t, got.text, "toolCallList[].id is not a valid identifier", name)
				}
				e.requireNoTrace(t, w, e.session)
			}

			// UUID-shaped, and unique: the tests share one Temporal.
			r := randomID() + randomID()
			uuid := r[:8] + "-" + r[8:12] + "-4" + r[13:16] + "-8" + r[17:20] + "-" + randomID()
			got := d.read(t, sendOK(t, d.tool(e, secret, at.Add(time.Second), uuid, "call_"+randomID(), "send_sms", smsToCaller)))
			require.False(t, got.err, got.text)
			require.Equal(t, 1, e.standins.Twilio.CountMessages(), got.text)
		})
	}
}

func sendOK(t *testing.T, req *http.Request) []byte {
	t.Helper()
	status, body := send(t, req)
	require.Equal(t, http.StatusOK, status, "%s", body)
	return body
}

// owedSignals lists the signals owed to the test session's workflow.
func (e *env) owedSignals() []ledger.OutboxSignal {
	e.t.Helper()
	due, err := e.store.OutboxListDue(e.ctx, 1000)
	require.NoError(e.t, err)
	var out []ledger.OutboxSignal
	for _, sig := range due {
		if sig.WorkflowID == "session/"+e.session {
			out = append(out, sig)
		}
	}
	return out
}
