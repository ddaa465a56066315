package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// An agent that states the number it wants to text as the caller's own
// gets no auto-approval from that statement: the text waits for a human,
// who sees where each fact came from.
func TestAgentDeclaredFactsNeverAutoApprove(t *testing.T) {
	t.Parallel()
	// The text and the email wait for approval side by side.
	e := setup(t, withAgentPolicy("while_awaiting_approval: strict", "while_awaiting_approval: allow_writes"), withStrictFacts)
	const anyNumber = "+14155550177"
	req := invokeRequest(e.session, "send_sms", e.key("sms"), `{"to":"`+anyNumber+`","body":"Your code is 1234."}`)
	req.SessionContext = map[string]string{"caller_number": anyNumber, "tenant_id": "t_100"}
	resp, err := e.agent.Invoke(e.ctx, req)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationAwaitingApproval, resp.State, "%+v", resp.Observation)
	require.True(t, resp.Pending)
	require.Zero(t, e.standins.Twilio.CountMessages(), "nothing was sent")

	// The email rule reads the tenant the agent stated: no auto-approval
	// either.
	email, err := e.invoke("email_property_manager", e.key("email"), `{"tenant_id":"t_100","summary":"Noise complaint"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationAwaitingApproval, email.State)
	require.Zero(t, e.standins.SES.CountEmails())

	apr, err := e.ops.Approval(e.ctx, resp.ApprovalID)
	require.NoError(t, err)
	require.Equal(t, "pending", apr.Status)
	require.Equal(t, []apitype.SessionFact{
		{Name: "caller_number", Value: anyNumber, Provenance: "agent-declared"},
		{Name: "tenant_id", Value: "t_100", Provenance: "agent-declared"},
	}, apr.Facts, "the approver sees each fact with its provenance")

	_, err = e.ops.Approve(e.ctx, resp.ApprovalID, "checked the number with the caller")
	require.NoError(t, err)
	done, err := e.agent.Wait(e.ctx, resp.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
	stored, err := e.store.ApprovalRequestGetByKey(e.ctx, e.key("sms"))
	require.NoError(t, err)
	require.Equal(t, "operator:demo-manager", stored.DecidedBy, "a human, not the rule, decided")
}

// A rule that needs no facts still fires, and a catalog that names
// agent-declared facts as enough gets what it asked for.
func TestRulesStillFireOnWhatTheyTrust(t *testing.T) {
	t.Parallel()
	e := setup(t, withStrictFacts)
	page, err := e.invoke("escalate_to_human", e.key("page"),
		`{"reason":"Gas smell in the hallway","urgency":"emergency","callback_number":"+14155550100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, page.State, "auto_approve_when: true reads no fact")

	trusting := setup(t)
	sms, err := trusting.invoke("send_sms", trusting.key("sms"), `{"to":"+14155550100","body":"Booked."}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, sms.State, "%+v", sms.Observation)
}

// An operator who checked the caller's number vouches for it, and the rule
// may then rest on it: the next text to that number needs no human. Only
// operators vouch, and only for facts the catalog declares.
func TestOperatorVouchedFactsAutoApprove(t *testing.T) {
	t.Parallel()
	e := setup(t, withStrictFacts)
	const caller = "+14155550188"
	req := invokeRequest(e.session, "send_sms", e.key("first"), `{"to":"`+caller+`","body":"We got your message."}`)
	req.SessionContext = map[string]string{"caller_number": caller}
	first, err := e.agent.Invoke(e.ctx, req)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationAwaitingApproval, first.State, "the agent's word alone approves nothing")

	_, err = e.agent.SetFact(e.ctx, e.session, "caller_number", caller)
	requireRefusal(t, err, http.StatusForbidden, mt.CodeNotApprover)
	_, err = e.ops.SetFact(e.ctx, e.session, "favourite_colour", "blue")
	requireRefusal(t, err, http.StatusUnprocessableEntity, mt.CodeInvalidRequest)
	_, err = e.ops.SetFact(e.ctx, e.session, "caller_number", "")
	requireRefusal(t, err, http.StatusUnprocessableEntity, mt.CodeInvalidRequest)

	sess, err := e.ops.SetFact(e.ctx, e.session, "caller_number", caller)
	require.NoError(t, err)
	require.Equal(t, caller, sess.Facts["caller_number"])
	require.Equal(t, "operator:demo-manager", sess.FactProvenance["caller_number"], "the vouch names who vouched")

	// The request made on the agent's word still waits for its manager.
	_, err = e.ops.Approve(e.ctx, first.ApprovalID, "number checked with the caller")
	require.NoError(t, err)
	done, err := e.agent.Wait(e.ctx, first.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State)

	second, err := e.invoke("send_sms", e.key("second"), `{"to":"`+caller+`","body":"A technician is on the way."}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, second.State, "%+v", second.Observation)
	require.Equal(t, 2, e.standins.Twilio.CountMessages())
	stored, err := e.store.ApprovalRequestGetByKey(e.ctx, e.key("second"))
	require.NoError(t, err)
	require.NotEqual(t, "operator:demo-manager", stored.DecidedBy, "the rule decided, on the operator's fact")
}
