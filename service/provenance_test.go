package service_test

import (
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
