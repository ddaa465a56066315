package mcp

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func demoCatalog(t *testing.T) *tools.Catalog {
	t.Helper()
	cat, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	return cat
}

func TestAnnotationsFollowTheClasses(t *testing.T) {
	cat := demoCatalog(t)
	for _, tc := range []struct {
		tool                              string
		readOnly, destructive, idempotent bool
		openWorld                         bool
	}{
		{tool: "lookup_tenant", readOnly: true, openWorld: true},
		{tool: "send_sms", destructive: true, idempotent: true, openWorld: true},
		{tool: "create_work_order", idempotent: true, openWorld: true},
		{tool: "issue_refund", destructive: true, idempotent: true, openWorld: true},
		{tool: "take_message", destructive: true, idempotent: true},
	} {
		tl, ok := cat.Tool(tc.tool)
		require.True(t, ok, tc.tool)
		a := annotations(tl)
		require.Equal(t, tc.readOnly, a.ReadOnlyHint, tc.tool)
		require.Equal(t, tc.destructive, *a.DestructiveHint, tc.tool)
		require.Equal(t, tc.idempotent, a.IdempotentHint, tc.tool)
		require.Equal(t, tc.openWorld, *a.OpenWorldHint, tc.tool)
	}

	repeatable := *mustTool(t, cat, "send_sms")
	repeatable.Repeatable = true
	require.False(t, annotations(&repeatable).IdempotentHint, "a repeatable tool's key carries each call's ID")
	money := *mustTool(t, cat, "create_work_order")
	money.Effect = mt.EffectMoney
	require.True(t, *annotations(&money).DestructiveHint, "money")
}

func mustTool(t *testing.T, cat *tools.Catalog, name string) *tools.Tool {
	t.Helper()
	tl, ok := cat.Tool(name)
	require.True(t, ok, name)
	return tl
}

func TestToolDefAddsTheSessionArgumentUnlessTheToolHasOne(t *testing.T) {
	tl := mustTool(t, demoCatalog(t), "lookup_tenant")
	def, owns, err := toolDef(tl)
	require.NoError(t, err)
	require.False(t, owns)
	props := def.InputSchema.(map[string]any)["properties"].(map[string]any)
	require.Contains(t, props, SessionArg)
	require.Contains(t, props, "tenant_id")
	require.NotContains(t, tl.InputSchema.JSON(), SessionArg, "the catalog's schema is left alone")

	schema, err := tools.CompileSchema(json.RawMessage(`{"type":"object","properties":{"session_id":{"type":"integer"}}}`))
	require.NoError(t, err)
	own := *tl
	own.InputSchema = schema
	def, owns, err = toolDef(&own)
	require.NoError(t, err)
	require.True(t, owns)
	require.Equal(t, "integer", def.InputSchema.(map[string]any)["properties"].(map[string]any)[SessionArg].(map[string]any)["type"])
}

func TestSplitArgs(t *testing.T) {
	args, session, ref := splitArgs(json.RawMessage(`{"tenant_id":"t_1","session_id":"call-9"}`), false)
	require.Nil(t, ref)
	require.Equal(t, "call-9", session)
	require.JSONEq(t, `{"tenant_id":"t_1"}`, string(args))

	args, session, ref = splitArgs(json.RawMessage(`{"tenant_id":"t_1","session_id":7}`), true)
	require.Nil(t, ref)
	require.Empty(t, session, "the tool's own argument")
	require.JSONEq(t, `{"tenant_id":"t_1","session_id":7}`, string(args))

	_, _, ref = splitArgs(json.RawMessage(`{"session_id":7}`), false)
	require.NotNil(t, ref)
	require.Equal(t, mt.CodeInvalidArgs, ref.Code)

	args, _, ref = splitArgs(nil, false)
	require.Nil(t, ref)
	require.JSONEq(t, `{}`, string(args))

	args, _, ref = splitArgs(json.RawMessage(`[1]`), false)
	require.Nil(t, ref)
	require.Equal(t, `[1]`, string(args), "left for admission to refuse with the schema's words")
}

func TestHostCheckOnLoopback(t *testing.T) {
	h, err := New(Config{Catalog: demoCatalog(t), API: http.NotFoundHandler(), PublicURL: "https://maestro.example.com"})
	require.NoError(t, err)
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	public := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8080}
	for _, tc := range []struct {
		local net.Addr
		host  string
		want  bool
	}{
		{loop, "127.0.0.1:8080", true},
		{loop, "localhost:8080", true},
		{loop, "[::1]:8080", true},
		{loop, "maestro.example.com", true},
		{loop, "evil.example.com", false},
		{loop, "evil.example.com:8080", false},
		{public, "evil.example.com", true},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
		r.Host = tc.host
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.local))
		require.Equal(t, tc.want, h.hostAllowed(r), "%s via %s", tc.host, tc.local)
	}
}

func TestUnauthenticatedGets401WithAChallenge(t *testing.T) {
	h, err := New(Config{Catalog: demoCatalog(t), API: http.NotFoundHandler()})
	require.NoError(t, err)
	for _, auth := range []string{"", "Bearer nope", "Bearer " + tools.DemoOpsKey, "Basic " + tools.DemoAgentKey} {
		r := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		r.Header.Set("Content-Type", "application/json")
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusUnauthorized, w.Code, auth)
		require.Equal(t, `Bearer realm="maestro"`, w.Header().Get("WWW-Authenticate"), auth)
	}
}
