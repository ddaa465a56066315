package server_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// with adds fields to a form.
func with(form url.Values, fields ...string) url.Values {
	out := url.Values{}
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	for i := 0; i+1 < len(fields); i += 2 {
		out.Set(fields[i], fields[i+1])
	}
	return out
}

// refundIn asks for a refund in another session of the test's, pending a
// manager's decision.
func (e *env) refundIn(session, name string) apiclient.Response {
	e.t.Helper()
	req := invokeRequest(session, "issue_refund", session+":"+name, refundArgs)
	req.SessionContext = sessionFacts
	resp, err := e.agent.Invoke(e.ctx, req)
	require.NoError(e.t, err)
	require.True(e.t, resp.Pending)
	return resp
}

// Every state-changing console form repeats its object's ID and its action
// in its body; a form that reached another object's address, or another
// action's, is refused with 400 and changes nothing.
func TestConsoleFormsMustRepeatTheirAddress(t *testing.T) {
	t.Parallel()
	e := setup(t)
	refund := e.requestRefund("refund")
	other := e.refundIn(e.session+"-b", "other")
	before, err := e.ops.Session(e.ctx, e.session)
	require.NoError(t, err)
	o := e.signIn(tools.DemoOpsKey)
	_, body := o.get("/console/sessions/" + e.session)
	csrf := csrfIn(body)
	require.NotEmpty(t, csrf)

	refundPage, sessPage := "/console/approvals/"+refund.ApprovalID, "/console/sessions/"+e.session
	held := workflows.PostCallHeldKey(e.session, "msg")
	heldPage := "/console/reconciliations/" + url.PathEscape(held)
	otherHeld := workflows.PostCallHeldKey(e.session, "other")
	vouch := url.Values{"name": {"caller_number"}, "value": {"+15550009999"}}
	for _, tc := range []struct {
		name, path string
		form       url.Values
	}{
		{"approve, naming another request", refundPage + "/approve", boundTo(other.ApprovalID, "approve")},
		{"approve, naming no request", refundPage + "/approve", url.Values{"target_action": {"approve"}}},
		{"approve, naming the reject action", refundPage + "/approve", boundTo(refund.ApprovalID, "reject")},
		{"approve, naming no action", refundPage + "/approve", url.Values{"target_id": {refund.ApprovalID}}},
		{"reject, naming another request", refundPage + "/reject", with(boundTo(other.ApprovalID, "reject"), "reason", "no")},
		{"modify, naming another request", refundPage + "/modify", with(boundTo(other.ApprovalID, "modify"), "arg.amount_cents", "1")},
		{"confirm a modification, naming another request", refundPage + "/modify/confirm",
			with(boundTo(other.ApprovalID, "modify/confirm"), "args", `{"tenant_id":"t_100","amount_cents":100,"reason":"Duplicate payment"}`)},
		{"confirm a modification, naming the modify action", refundPage + "/modify/confirm",
			with(boundTo(refund.ApprovalID, "modify"), "args", `{"tenant_id":"t_100","amount_cents":100,"reason":"Duplicate payment"}`)},
		{"vouch, from an approval's form", sessPage + "/facts", with(boundTo(refund.ApprovalID, "approve"), "name", "caller_number", "value", "+15550009999")},
		{"vouch, naming no session", sessPage + "/facts", vouch},
		{"vouch, an approval's address with a vouch's body", refundPage + "/approve", with(boundTo(e.session, "facts"), "name", "caller_number", "value", "+15550009999")},
		{"roll back, naming another session", sessPage + "/rollback", with(boundTo("call-other", "rollback"), "reason", "test")},
		{"resolve, naming the rollback action", sessPage + "/resolve", with(boundTo(e.session, "rollback"), "reason", "test")},
		{"check a reconciliation, naming another key", heldPage + "/check", boundTo(otherHeld, "check")},
		{"settle a reconciliation, naming another key", heldPage + "/resolve", with(boundTo(otherHeld, "resolve"), "outcome", "delivered", "reason", "phoned")},
		{"retry a reconciliation, naming the key's escaped form", heldPage + "/retry", boundTo(url.PathEscape(held), "retry")},
	} {
		status, body := o.post(tc.path, with(tc.form, "csrf", csrf))
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.name, textOf(body))
		require.Contains(t, textOf(body), "must repeat the", tc.name)
		require.Contains(t, textOf(body), "Nothing was done", tc.name)
	}

	require.Equal(t, "pending", e.approvalStatus(refund.ApprovalID))
	require.Equal(t, "pending", e.approvalStatus(other.ApprovalID))
	sess, err := e.ops.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.NotEqual(t, "operator", sess.FactProvenance["caller_number"], "no fact was vouched for")
	require.Equal(t, before.State, sess.State, "nothing was rolled back or resolved")
	require.Equal(t, before.UndoStack, sess.UndoStack)
	require.Zero(t, e.standins.Sandbox.CountRefunds())

	// The page's own form, which repeats its address, is accepted.
	status, body := o.postForm(sessPage, sessPage+"/facts", vouch)
	require.Equal(t, http.StatusOK, status, textOf(body))
	require.Contains(t, textOf(body), "you vouch for this fact")
}
