package server_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func withAuditorCatalog(o *options) { o.catalog = []byte(withAuditor(string(tools.DemoCatalogYAML))) }

// The console offers each restricted action only to an operator the
// catalog permits, tells the others which role could, and a post made
// anyway meets the API's refusal and changes nothing.
func TestConsoleOffersActionsOnlyToPermittedOperators(t *testing.T) {
	t.Parallel()
	e := setup(t, withAuditorCatalog, withShortProviderTimeout)
	loseNextAnswer(t, e.standins.SES.Faults())
	key := e.key("mail")
	held, err := e.invoke("email_property_manager", key, emailArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationNeedsReconciliation, held.State, "%+v", held.Observation)

	sessionPage := "/console/sessions/" + url.PathEscape(e.session)
	reconciliationPage := "/console/reconciliations/" + url.PathEscape(key)
	auditor := e.signIn(auditorKey)
	pages := []struct {
		path, form, whyNot string
	}{
		{"/console/catalog", `action="/console/catalog/reload"`, "Only an operator with the role admin can reload the catalog. You hold auditor."},
		{"/console/canary", `action="/console/canary/run"`, "Only an operator with the role admin or ops can run the canary. You hold auditor."},
		{sessionPage, `name="value"`, "Only an operator with the role ops or manager can vouch for session facts. You hold auditor."},
		{reconciliationPage, `name="outcome"`, "Only an operator with the role admin or manager can settle a held effect by hand. You hold auditor."},
	}
	for _, p := range pages {
		status, body := auditor.get(p.path)
		require.Equal(t, http.StatusOK, status, p.path)
		require.NotContains(t, body, p.form, p.path)
		require.Contains(t, textOf(body), p.whyNot, p.path)
	}

	status, body := auditor.postForm(sessionPage, sessionPage+"/facts", with(boundTo(e.session, "facts"), "name", "caller_number", "value", "+14155550177"))
	require.Equal(t, http.StatusForbidden, status, body)
	require.Contains(t, textOf(body), "Nothing was recorded")
	sess, err := e.ops.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, "agent-declared", sess.FactProvenance["caller_number"])

	status, body = auditor.postForm(reconciliationPage, reconciliationPage+"/resolve", with(boundTo(key, "resolve"), "outcome", "not_delivered", "reason", "not seen"))
	require.Equal(t, http.StatusForbidden, status, body)
	require.Contains(t, textOf(body), "Nothing was settled")
	e.requireHeld(key)

	manager := e.signIn(tools.DemoOpsKey)
	for _, p := range pages {
		status, body := manager.get(p.path)
		require.Equal(t, http.StatusOK, status, p.path)
		require.Contains(t, body, p.form, p.path)
		require.NotContains(t, textOf(body), "Only an operator with the role", p.path)
	}
}

// The approval page says what an auto-approval rested on and who vouched
// for it; the session page says who vouches for each fact.
func TestConsoleNamesWhoseVouchAnAutoApprovalRestedOn(t *testing.T) {
	t.Parallel()
	e := setup(t, withStrictFacts)
	e.openSession()
	const caller = "+14155550188"
	_, err := e.ops.SetFact(e.ctx, e.session, "caller_number", caller)
	require.NoError(t, err)
	sms, err := e.agent.Invoke(e.ctx, invokeRequest(e.session, "send_sms", e.key("sms"), `{"to":"`+caller+`","body":"On the way."}`))
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, sms.State, "%+v", sms.Observation)
	stored, err := e.store.ApprovalRequestGetByKey(e.ctx, e.key("sms"))
	require.NoError(t, err)

	o := e.signIn(tools.DemoOpsKey)
	status, body := o.get("/console/approvals/" + stored.ID)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, textOf(body), "auto_approved rule:args.to == session.caller_number Rested on caller_number = "+caller+", vouched for by operator:demo-manager")

	status, body = o.get("/console/sessions/" + url.PathEscape(e.session))
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, textOf(body), "caller_number "+caller+" operator:demo-manager")
}
