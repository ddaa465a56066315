package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/mcp"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// The keys a rotation gives the demo's agent and operator.
const (
	rotatedAgentKey = "rotated-agent-key-4f1c9a7e2b6d8e03"
	rotatedOpsKey   = "rotated-ops-key-9b2e7c4a1f6d3e85"
)

// withKeys is yaml with the demo agent's and operator's key hashes
// replaced by those of agentKey and opsKey.
func withKeys(t *testing.T, yaml, agentKey, opsKey string) string {
	t.Helper()
	doc, err := tools.ReplacingDemoKeys([]byte(yaml), agentKey, opsKey)
	require.NoError(t, err)
	return string(doc)
}

// withOperator is yaml with one more operator, holding role ops.
func withOperator(yaml, id, key string) string {
	return strings.Replace(yaml, "operators:\n",
		"operators:\n  - id: "+id+"\n    api_key_sha256: "+tools.HashKey(key)+"\n    roles: [ops]\n", 1)
}

func TestReloadEndsAChangedKeyOnTheAPI(t *testing.T) {
	t.Parallel()
	file := newCatalogFile(t, demoYAML)
	e := setup(t, withCatalogFile(file))
	_, err := e.agent.Tools(e.ctx)
	require.NoError(t, err)
	_, err = e.ops.Approvals(e.ctx, "pending")
	require.NoError(t, err)
	_, err = e.invoke("lookup_tenant", e.key("before"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err, "the session exists before the rotation")

	file.write(t, withKeys(t, demoYAML, rotatedAgentKey, rotatedOpsKey))
	res, err := e.ops.ReloadCatalog(e.ctx)
	require.NoError(t, err)
	require.True(t, res.Changed)

	unauthorized := func(err error, what string) {
		t.Helper()
		require.True(t, apiclient.IsRefusal(err, mt.CodeUnauthorized), "%s: %v", what, err)
	}
	// The old agent key is refused on every route that takes one, the
	// first request after the reload.
	_, err = e.agent.Tools(e.ctx)
	unauthorized(err, "old agent key, tools")
	_, err = e.invoke("lookup_tenant", e.key("after"), `{"tenant_id":"t_100"}`)
	unauthorized(err, "old agent key, invoke")
	_, err = e.agent.Session(e.ctx, e.session)
	unauthorized(err, "old agent key, session")
	_, err = e.agent.PlatformExport(e.ctx, "vapi", "voice-agent")
	unauthorized(err, "old agent key, platform export")
	// So is the old operator key.
	_, err = e.ops.Approvals(e.ctx, "pending")
	unauthorized(err, "old operator key, approvals")
	_, err = e.ops.Session(e.ctx, e.session)
	unauthorized(err, "old operator key, session")
	_, err = e.ops.ReloadCatalog(e.ctx)
	unauthorized(err, "old operator key, reload")

	// MCP refuses the old agent key too.
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+mcp.Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tools.DemoAgentKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "old agent key, MCP")

	// The new keys work at once.
	agent := apiclient.New(e.url, rotatedAgentKey, apiclient.Options{HTTPClient: openAPIClient(t)})
	ops := apiclient.New(e.url, rotatedOpsKey, apiclient.Options{HTTPClient: openAPIClient(t)})
	_, err = agent.Tools(e.ctx)
	require.NoError(t, err)
	_, err = agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	_, err = ops.Approvals(e.ctx, "pending")
	require.NoError(t, err)
	cs, err := e.mcpConnect(rotatedAgentKey, nil)
	require.NoError(t, err, "MCP takes the new agent key")
	_ = cs.Close()
}

func TestConsoleBrowserKeyChangeEndsTheSession(t *testing.T) {
	t.Parallel()
	const clerk, clerkKey = "night-ops", "night-ops-key-7d3f0b9e1c5a2468"
	file := newCatalogFile(t, demoYAML)
	e := setup(t, withCatalogFile(file))
	ctx := browser(t)
	browserSignIn(t, ctx, e.url, tools.DemoOpsKey, "")
	// A second sign-in of the same operator, without a browser, posts a
	// form after the rotation.
	manager := e.signIn(tools.DemoOpsKey)
	_, queue := manager.get("/console/approvals")
	csrf := csrfIn(queue)
	require.NotEmpty(t, csrf)

	// The manager's key is rotated and a clerk is added.
	rotated := withOperator(withKeys(t, demoYAML, tools.DemoAgentKey, rotatedOpsKey), clerk, clerkKey)
	file.write(t, rotated)
	_, err := e.svc.ReloadCatalog(e.ctx)
	require.NoError(t, err)

	// The browser's next page is the sign-in, saying why.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/console/approvals"),
		chromedp.WaitVisible(chromedp.CSS("#key")),
	))
	require.Contains(t, text(t, ctx, "p.problem"), "your operator key was changed or removed")
	shoot(t, ctx, "signin-key-changed")
	// The old key no longer signs in; the new one does. (A fresh form, so
	// the problem waited for is the answer's, not this page's.)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/console/signin"),
		chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), tools.DemoOpsKey),
		chromedp.Submit(chromedp.CSS("#key")),
		chromedp.WaitVisible(chromedp.CSS("p.problem")),
	))
	require.Contains(t, text(t, ctx, "p.problem"), "not an operator key")
	browserSignIn(t, ctx, e.url, rotatedOpsKey, "")

	// A form posted from the old session is refused, and does nothing.
	status, body := manager.post("/console/catalog/reload", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, textOf(body), "your operator key was changed or removed")
	require.Contains(t, textOf(body), "Nothing was done")
	status, body = manager.get("/console/approvals")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="key"`, "the ended session is gone: the console asks for a key")

	// Removing an operator ends its session the same way.
	clerkVisit := e.signIn(clerkKey)
	file.write(t, withKeys(t, demoYAML, tools.DemoAgentKey, rotatedOpsKey))
	_, err = e.svc.ReloadCatalog(e.ctx)
	require.NoError(t, err)
	status, body = clerkVisit.get("/console/approvals")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="key"`)
	require.Contains(t, textOf(body), "your operator key was changed or removed")

	// The browser's session, signed in with the current key, holds.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/console/approvals"),
		chromedp.WaitVisible(chromedp.CSS("#queue")),
	))
}
