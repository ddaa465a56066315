package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

// pendingStatus reads an approval's status through the API, never the
// console, so a refused form is proved to have changed nothing.
func (e *env) approvalStatus(id string) string {
	e.t.Helper()
	a, err := e.ops.Approval(e.ctx, id)
	require.NoError(e.t, err)
	return a.Status
}

func TestConsoleSignInRefusesBadKeysAndForeignForms(t *testing.T) {
	t.Parallel()
	e := setup(t)
	o := e.visitor()

	status, body := o.get("/console/approvals")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `name="key"`, "a visitor without a session is sent to sign in")

	status, body = o.post("/console/signin", url.Values{"key": {"not-a-key"}, "csrf": {csrfIn(body)}})
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, textOf(body), "That is not an operator key")

	status, body = o.post("/console/signin", url.Values{"key": {tools.DemoAgentKey}, "csrf": {csrfIn(body)}})
	require.Equal(t, http.StatusUnauthorized, status, "an agent key is not an operator key")

	// A form posted from elsewhere carries no sign-in cookie of ours.
	stranger := e.visitor()
	status, body = stranger.post("/console/signin", url.Values{"key": {tools.DemoOpsKey}, "csrf": {"forged"}})
	require.Equal(t, http.StatusForbidden, status)
	require.Contains(t, textOf(body), "did not come from this console")

	page := e.signIn(tools.DemoOpsKey)
	_, body = page.get("/console/approvals")
	require.Contains(t, textOf(body), "demo-manager")
	require.NotContains(t, body, tools.DemoOpsKey, "the key never comes back to the browser")
}

func TestConsoleRefusesPostsWithoutCookieOrCSRF(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")
	page := "/console/approvals/" + pending.ApprovalID
	approve := page + "/approve"

	status, body := e.visitor().post(approve, url.Values{"csrf": {"anything"}})
	require.Equal(t, http.StatusUnauthorized, status, "a post without a session cookie")
	require.Contains(t, textOf(body), "not signed in")
	require.Equal(t, "pending", e.approvalStatus(pending.ApprovalID))

	o := e.signIn(tools.DemoOpsKey)
	status, body = o.post(approve, url.Values{})
	require.Equal(t, http.StatusForbidden, status, "a post without the CSRF token")
	require.Contains(t, textOf(body), "security token is missing or stale")
	status, _ = o.post(approve, url.Values{"csrf": {"stale"}})
	require.Equal(t, http.StatusForbidden, status, "a post with another token")
	require.Equal(t, "pending", e.approvalStatus(pending.ApprovalID))

	status, body = o.postForm(page, approve, url.Values{})
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, textOf(body), "Approved. The call runs once")
	require.Equal(t, "approved", e.approvalStatus(pending.ApprovalID))
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, "succeeded", string(done.State))
	require.Equal(t, 1, e.standins.Sandbox.CountRefunds())
}

func TestConsoleSignOutEndsTheSessionEverywhere(t *testing.T) {
	t.Parallel()
	e := setup(t)
	o := e.signIn(tools.DemoOpsKey)
	cookies := o.c.Jar.Cookies(mustURL(t, e.url+"/console/"))
	require.NotEmpty(t, cookies)

	status, body := o.postForm("/console/approvals", "/console/signout", url.Values{})
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, textOf(body), "You are signed out")

	// The old cookie, replayed by anyone who kept it, opens nothing.
	thief := e.visitor()
	thief.c.Jar.SetCookies(mustURL(t, e.url+"/console/"), cookies)
	_, body = thief.get("/console/approvals")
	require.Contains(t, body, `name="key"`)
	other := e.signIn(tools.DemoOpsKey)
	_, body = other.get("/console/approvals")
	require.Contains(t, body, "Approval queue", "another process sharing the ledger signs in anew")
}

func TestConsoleCookiesAreHttpOnlyStrictAndSecure(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *options) { o.secureCookies = true })
	resp, err := http.Get(e.url + "/console/signin")
	require.NoError(t, err)
	_ = resp.Body.Close()
	raw := resp.Header.Values("Set-Cookie")
	require.Len(t, raw, 1)
	for _, attr := range []string{"HttpOnly", "Secure", "SameSite=Strict", "Path=/console"} {
		require.Contains(t, raw[0], attr)
	}
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
}

func TestConsoleDecisionsNeedReasonsAndValidArguments(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")
	page := "/console/approvals/" + pending.ApprovalID
	o := e.signIn(tools.DemoOpsKey)

	status, body := o.postForm(page, page+"/reject", url.Values{"reason": {""}})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Contains(t, textOf(body), "A rejection needs a reason")

	status, body = o.postForm(page+"/modify", page+"/modify", url.Values{
		"arg.tenant_id": {"t_100"}, "arg.amount_cents": {"999999"}, "arg.reason": {"Duplicate payment"}})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Contains(t, textOf(body), "amount_cents")
	status, body = o.postForm(page+"/modify", page+"/modify", url.Values{
		"arg.tenant_id": {"t_100"}, "arg.amount_cents": {"twelve"}, "arg.reason": {"Duplicate payment"}})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Contains(t, textOf(body), "amount_cents: must be a whole number")

	// A confirm that skipped the review still meets the API's schema.
	confirm := boundTo(pending.ApprovalID, "modify/confirm")
	confirm.Set("args", `{"tenant_id":"t_100","amount_cents":-5,"reason":"x"}`)
	status, body = o.postForm(page, page+"/modify/confirm", confirm)
	require.Equal(t, http.StatusUnprocessableEntity, status, body)
	require.Contains(t, textOf(body), "Nothing was decided")
	require.Equal(t, "pending", e.approvalStatus(pending.ApprovalID))
	require.Zero(t, e.standins.Sandbox.CountRefunds())
}

func TestConsoleShowsWhyAnOperatorCannotDecide(t *testing.T) {
	t.Parallel()
	e := setup(t, withClerk)
	pending := e.requestRefund("refund")
	page := "/console/approvals/" + pending.ApprovalID
	clerk := e.signIn(clerkKey)

	_, body := clerk.get(page)
	require.NotContains(t, body, `class="approve"`)
	require.Contains(t, textOf(body), "Only an operator with the role manager can decide this request. You hold ops.")

	// Posting anyway meets the API's check of the approver role.
	status, body := clerk.postForm(page, page+"/approve", boundTo(pending.ApprovalID, "approve"))
	require.Equal(t, http.StatusForbidden, status, body)
	require.Contains(t, textOf(body), "Nothing was decided")
	require.Equal(t, "pending", e.approvalStatus(pending.ApprovalID))
}

func TestConsolePagesAnswerForUnknownThings(t *testing.T) {
	t.Parallel()
	e := setup(t)
	o := e.signIn(tools.DemoOpsKey)
	for _, path := range []string{"/console/approvals/apr_missing", "/console/sessions/no-such-call", "/console/reconciliations/no-such-key", "/console/nowhere"} {
		status, body := o.get(path)
		require.Equal(t, http.StatusNotFound, status, path)
		require.Contains(t, body, `role="alert"`, path)
	}
	status, body := o.get("/console/approvals")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, textOf(body), "No request is waiting")
	big := url.Values{"csrf": {csrfIn(body)}, "reason": {strings.Repeat("x", 70<<10)}}
	status, _ = o.post("/console/signout", big)
	require.NotEqual(t, http.StatusOK, status, "an oversized form is refused")
}

func mustURL(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u
}

func TestConsoleShowsAWriteBeforeAndAfter(t *testing.T) {
	t.Parallel()
	e := setup(t)
	del, err := e.invoke("delete_tenant_account", e.key("delete"), `{"tenant_id":"t_101"}`)
	require.NoError(t, err)
	_, err = e.ops.Approve(e.ctx, del.ApprovalID, "the holder asked in writing")
	require.NoError(t, err)
	done, err := e.agent.Wait(e.ctx, del.InvocationID)
	require.NoError(t, err)
	require.Equal(t, "succeeded", string(done.State))

	o := e.signIn(tools.DemoOpsKey)
	_, body := o.get("/console/sessions/" + e.session)
	page := textOf(body)
	require.Contains(t, page, "The record before and after this write")
	require.Regexp(t, `deleted false true`, page, "the tenant record as the back office gave it, before and after")

	_, body = o.get("/console/canary")
	require.Contains(t, textOf(body), "Reality canary")
}

func TestConsoleVouchesForAFactAndShowsTheCatalog(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	o := e.signIn(tools.DemoOpsKey)
	page := "/console/sessions/" + e.session

	status, body := o.postForm(page, page+"/facts", url.Values{"name": {"caller_number"}, "value": {""}})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Contains(t, textOf(body), "Nothing was recorded")
	status, body = o.postForm(page, page+"/facts", url.Values{"name": {"caller_number"}, "value": {"+15550100200"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, textOf(body), "you vouch for this fact")
	sess, err := e.ops.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, "+15550100200", sess.Facts["caller_number"])
	require.Equal(t, "operator:demo-manager", sess.FactProvenance["caller_number"])

	status, body = o.get("/console/catalog")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, textOf(body), "Every process follows")
	// This process has no catalog file to re-read: the API's refusal is shown.
	status, body = o.postForm("/console/catalog", "/console/catalog/reload", url.Values{})
	require.Equal(t, http.StatusNotFound, status, body)
	require.Contains(t, body, `role="alert"`)
}
