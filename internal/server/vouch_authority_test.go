package server_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// openSession starts the test's session with a read that states no facts,
// so every fact a rule could rest on is one an operator vouched for.
func (e *env) openSession() {
	e.t.Helper()
	resp, err := e.agent.Invoke(e.ctx, invokeRequest(e.session, "lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`))
	require.NoError(e.t, err)
	require.Equal(e.t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
}

// A text to a number an ops clerk vouched for waits for a manager: the
// clerk may not approve the text, so their vouch may not either.
func TestAnOpsVouchDoesNotAutoApproveAManagerGatedText(t *testing.T) {
	t.Parallel()
	e := setup(t, withClerk, withStrictFacts)
	clerk := apiclient.New(e.url, clerkKey, apiclient.Options{HTTPClient: openAPIClient(t)})
	e.openSession()
	const anyNumber = "+14155550177"

	sess, err := clerk.SetFact(e.ctx, e.session, "caller_number", anyNumber)
	require.NoError(t, err, "ops may vouch: the vouch is recorded under their name")
	require.Equal(t, "operator:night-clerk", sess.FactProvenance["caller_number"])

	sms, err := e.agent.Invoke(e.ctx, invokeRequest(e.session, "send_sms", e.key("sms"), `{"to":"`+anyNumber+`","body":"Your code is 1234."}`))
	require.NoError(t, err)
	require.Equal(t, mt.InvocationAwaitingApproval, sms.State, "%+v", sms.Observation)
	require.True(t, sms.Pending, "the call waits for a human, it is not refused")
	require.Zero(t, e.standins.Twilio.CountMessages(), "nothing was sent")

	apr, err := e.ops.Approval(e.ctx, sms.ApprovalID)
	require.NoError(t, err)
	require.Equal(t, "pending", apr.Status)
	require.Equal(t, []string{"requested"}, eventKinds(apr))
	require.Equal(t, []apitype.SessionFact{{Name: "caller_number", Value: anyNumber, Provenance: "operator:night-clerk"}}, apr.Facts,
		"the manager deciding sees who vouched")

	_, err = clerk.Approve(e.ctx, sms.ApprovalID, "I vouched for it")
	requireRefusal(t, err, 403, mt.CodeNotApprover)
	require.Zero(t, e.standins.Twilio.CountMessages())
}

// A manager's vouch is a manager's approval: the text goes out once, and
// the approval log names the manager whose fact the rule rested on.
func TestAManagersVouchAutoApprovesAndTheLogNamesThem(t *testing.T) {
	t.Parallel()
	e := setup(t, withClerk, withStrictFacts)
	e.openSession()
	const caller = "+14155550188"

	sess, err := e.ops.SetFact(e.ctx, e.session, "caller_number", caller)
	require.NoError(t, err)
	require.Equal(t, "operator:demo-manager", sess.FactProvenance["caller_number"])

	sms, err := e.agent.Invoke(e.ctx, invokeRequest(e.session, "send_sms", e.key("sms"), `{"to":"`+caller+`","body":"A technician is on the way."}`))
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, sms.State, "%+v", sms.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "sent once")

	stored, err := e.store.ApprovalRequestGetByKey(e.ctx, e.key("sms"))
	require.NoError(t, err)
	apr, err := e.ops.Approval(e.ctx, stored.ID)
	require.NoError(t, err)
	require.Equal(t, "auto_approved", apr.Status)
	require.Equal(t, "rule:args.to == session.caller_number", apr.DecidedBy)
	var decided *apitype.ApprovalEvent
	for i, ev := range apr.Events {
		if ev.Kind == "auto_approved" {
			decided = &apr.Events[i]
		}
	}
	require.NotNil(t, decided, "%+v", apr.Events)
	var rested apitype.RestedOn
	require.NoError(t, json.Unmarshal(decided.Detail, &rested))
	require.Equal(t, []apitype.RestedFact{{Fact: "caller_number", Value: caller, Provenance: "operator:demo-manager"}}, rested.Facts)

	// The same number vouched for by the clerk instead no longer counts.
	_, err = apiclient.New(e.url, clerkKey, apiclient.Options{}).SetFact(e.ctx, e.session, "caller_number", caller)
	require.NoError(t, err)
	again, err := e.agent.Invoke(e.ctx, invokeRequest(e.session, "send_sms", e.key("sms-2"), `{"to":"`+caller+`","body":"They are outside."}`))
	require.NoError(t, err)
	require.Equal(t, mt.InvocationAwaitingApproval, again.State, "%+v", again.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
}
