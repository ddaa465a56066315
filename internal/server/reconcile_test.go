package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/activities"
	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

const (
	smsArgs   = `{"to":"+14155550100","body":"Your technician arrives at 9."}`
	emailArgs = `{"tenant_id":"t_100","summary":"The heating in unit 4B is out."}`
)

// loseNextAnswer makes a stand-in perform the next request's effect and
// then never answer it, as a dropped connection would.
func loseNextAnswer(t *testing.T, f *fault.Injector) {
	t.Helper()
	require.NoError(t, f.Add(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect, Method: http.MethodPost}))
	t.Cleanup(f.Release)
}

func withShortProviderTimeout(o *options) { o.providerTimeout = 500 * time.Millisecond }

func (e *env) reconciliationKinds(key string) []string {
	e.t.Helper()
	r, err := e.ops.Reconciliation(e.ctx, key)
	require.NoError(e.t, err)
	out := []string{}
	for _, ev := range r.Events {
		out = append(out, ev.Kind)
	}
	return out
}

func (e *env) requireHeld(key string) apitype.Reconciliation {
	e.t.Helper()
	list, err := e.ops.Reconciliations(e.ctx)
	require.NoError(e.t, err)
	for _, r := range list.Reconciliations {
		if r.OperationKey == key {
			require.Equal(e.t, string(mt.EffectNeedsReconciliation), r.Status)
			return r
		}
	}
	e.t.Fatalf("%s is not listed for reconciliation: %+v", key, list)
	return apitype.Reconciliation{}
}

func TestTwilioLostAnswerAdoptsTheMessageItFinds(t *testing.T) {
	t.Parallel()
	e := setup(t, withShortProviderTimeout)
	loseNextAnswer(t, e.standins.Twilio.Faults())

	resp, err := e.invoke("send_sms", e.key("sms"), smsArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "found, not resent")
	sid := e.standins.Twilio.Messages()[0].SID
	require.Equal(t, sid, resp.Observation.Receipt.ID, "the provider's own SID is the receipt")
	require.Equal(t, "twilio", resp.Observation.Receipt.Provider)
	require.Contains(t, resp.Observation.Summary, "found in the provider's records")

	msg, err := e.standins.Reader().TwilioMessage(sid)
	require.NoError(t, err)
	require.Equal(t, "Your technician arrives at 9.", msg.Detail["body"])
	require.Equal(t, []string{"adopted"}, e.reconciliationKinds(e.key("sms")))
}

func TestAdoptedMatchWithBrokenWordingStillSettles(t *testing.T) {
	t.Parallel()
	const (
		wording = `success: "I've sent the text; Twilio reports it {{.Receipt.Status}}."`
		broken  = `success: "I've sent the text; Twilio reports it {{.Receipt.Status}} to {{.Payload.no_such_field}}."`
	)
	require.True(t, bytes.Contains(tools.DemoCatalogYAML, []byte(wording)), "the demo catalog changed")
	e := setup(t, withShortProviderTimeout, func(o *options) {
		o.catalog = bytes.Replace(tools.DemoCatalogYAML, []byte(wording), []byte(broken), 1)
	})
	loseNextAnswer(t, e.standins.Twilio.Faults())

	resp, err := e.invoke("send_sms", e.key("sms"), smsArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	sid := e.standins.Twilio.Messages()[0].SID
	require.Equal(t, sid, resp.Observation.Receipt.ID)
	require.Equal(t, "The provider accepted the request; the reference is "+sid+".", resp.Observation.Wording)
	require.Equal(t, []string{"adopted"}, e.reconciliationKinds(e.key("sms")))
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
}

func TestHTTPLostAnswerIsReplayedUnderTheSameKey(t *testing.T) {
	t.Parallel()
	e := setup(t, withShortProviderTimeout)
	loseNextAnswer(t, e.standins.Sandbox.Faults())

	resp, err := e.invoke("create_work_order", e.key("wo"), woArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders(), "one resource")
	require.Equal(t, 1, e.standins.Sandbox.IdempotentReplays(), "the replay was answered from the first request")
	_, ok := e.standins.Sandbox.WorkOrder(resp.Observation.Receipt.ID)
	require.True(t, ok)
	require.Equal(t, []string{"replayed"}, e.reconciliationKinds(e.key("wo")))
}

func TestSESLostAnswerWaitsForAHumanDecision(t *testing.T) {
	t.Parallel()
	e := setup(t, withShortProviderTimeout)
	loseNextAnswer(t, e.standins.SES.Faults())
	key := e.key("mail?1#%2F") // characters a path must escape, to prove the key survives it

	resp, err := e.invoke("email_property_manager", key, emailArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationNeedsReconciliation, resp.State, "%+v", resp.Observation)
	require.Equal(t, mt.CodeOutcomeUnknown, resp.Observation.Code)
	require.Equal(t, 1, e.standins.SES.CountEmails())

	held := e.requireHeld(key)
	require.False(t, held.Searchable, "SES cannot be searched")
	require.Contains(t, held.Reason, "cannot be searched")
	require.Equal(t, []string{"escalated"}, e.reconciliationKinds(key))

	_, err = e.ops.CheckReconciliation(e.ctx, key)
	require.True(t, apiclient.IsRefusal(err, mt.CodeOutcomeUnknown), "a check cannot settle it: %v", err)

	r, err := e.ops.ResolveReconciliation(e.ctx, key, apitype.OutcomeDelivered, "seen in the manager's inbox")
	require.NoError(t, err)
	require.Equal(t, string(mt.EffectSucceeded), r.Status)
	require.Equal(t, activities.HumanAttested, r.Receipt.Provider, "never a provider's receipt")
	require.NotEqual(t, e.standins.SES.Emails()[0].MessageID, r.Receipt.ID)
	require.Equal(t, "operator:demo-manager", r.Receipt.Fields["attested_by"])
	require.Equal(t, []string{"escalated", "delivered"}, e.reconciliationKinds(key))

	done, err := e.agent.Invocation(e.ctx, resp.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State)
	obs := done.Observation
	require.Equal(t, mt.StatusWarning, obs.Status, "a human's word is not a provider's proof")
	require.Equal(t, mt.CodeHumanAttested, obs.Code)
	require.NotContains(t, obs.Wording, "emailed", "the agent may not claim the delivery")

	_, err = e.ops.ResolveReconciliation(e.ctx, key, apitype.OutcomeNotDelivered, "second thoughts")
	require.True(t, apiclient.IsRefusal(err, mt.CodeNotHeld), "one decision per held effect: %v", err)
	require.Equal(t, 1, e.standins.SES.CountEmails(), "nothing was ever resent")
}

func TestNotDeliveredFreesTheAgentToTryAgainWithANewKey(t *testing.T) {
	t.Parallel()
	e := setup(t, withShortProviderTimeout)
	// The request never reaches SES and gets no answer: the email was not sent.
	require.NoError(t, e.standins.SES.Faults().Add(fault.Rule{Action: fault.Hang, Method: http.MethodPost}))
	t.Cleanup(e.standins.SES.Faults().Release)

	resp, err := e.invoke("email_property_manager", e.key("mail"), emailArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationNeedsReconciliation, resp.State)

	r, err := e.ops.ResolveReconciliation(e.ctx, e.key("mail"), apitype.OutcomeNotDelivered, "not in the SES sending log")
	require.NoError(t, err)
	require.Equal(t, string(mt.EffectFailed), r.Status)
	done, err := e.agent.Invocation(e.ctx, resp.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationFailed, done.State)
	require.Equal(t, mt.CodeNotDelivered, done.Observation.Code)

	again, err := e.invoke("email_property_manager", e.key("mail-retry"), emailArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, again.State, "%+v", again.Observation)
	require.Equal(t, 1, e.standins.SES.CountEmails())
}

func TestMoneyWithAnUnknownOutcomeAlwaysGoesToAHuman(t *testing.T) {
	t.Parallel()
	// The clerk may settle by hand, but not money: that needs the tool's
	// approver role too.
	e := setup(t, withShortProviderTimeout, withClerk, withPermission(tools.PermSettleReconciliations, "ops, manager"))
	loseNextAnswer(t, e.standins.Sandbox.Faults())
	pending := e.requestRefund("refund")
	_, err := e.ops.Approve(e.ctx, pending.ApprovalID, "duplicate confirmed")
	require.NoError(t, err)

	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationNeedsReconciliation, done.State, "%+v", done.Observation)
	require.Equal(t, 1, e.standins.Sandbox.CountRefunds())
	require.Zero(t, e.standins.Sandbox.IdempotentReplays(), "money is not replayed, even under a key")

	held := e.requireHeld(e.key("refund"))
	require.Equal(t, "money", held.Effect)
	require.False(t, held.Searchable)

	clerk := apiclient.New(e.url, clerkKey, apiclient.Options{})
	_, err = clerk.ResolveReconciliation(e.ctx, e.key("refund"), apitype.OutcomeDelivered, "saw it in the bank feed")
	require.True(t, apiclient.IsRefusal(err, mt.CodeNotApprover), "money needs the tool's approver role: %v", err)
	_, err = e.ops.CheckReconciliation(e.ctx, e.key("refund"))
	require.True(t, apiclient.IsRefusal(err, mt.CodeOutcomeUnknown), "no automatic settling of money: %v", err)

	refund := e.standins.Sandbox.Refunds()[0]
	r, err := e.ops.ResolveReconciliation(e.ctx, e.key("refund"), apitype.OutcomeDelivered, "refund "+refund.ID+" is in the billing system")
	require.NoError(t, err)
	require.Equal(t, string(mt.EffectSucceeded), r.Status)
	require.Equal(t, []string{"escalated", "delivered"}, e.reconciliationKinds(e.key("refund")))

	rep, err := e.ops.Audit(e.ctx)
	require.NoError(t, err)
	require.True(t, rep.Clean, "%+v", rep.Findings)
}

// claimAbandoned records a claim on key as a worker that died right after
// calling the provider would leave it: in progress, its lease expired.
func (e *env) claimAbandoned(key, tool, args string) {
	e.t.Helper()
	_, hash, err := approval.Canonicalize(json.RawMessage(args))
	require.NoError(e.t, err)
	_, err = e.store.EffectClaim(e.ctx, ledger.EffectClaimParams{
		OperationKey: key, InvocationID: "inv_dead", Tool: tool, PayloadHash: hash,
		Owner: "dead-worker", LeaseTTL: time.Millisecond,
	})
	require.NoError(e.t, err)
}

// sendDirect performs an SMS at the stand-in as a dead attempt would have.
func (e *env) sendDirect(body string) string {
	e.t.Helper()
	set, err := connectors.NewSet(e.standins.TwilioConfig(), e.standins.SESConfig(), connectors.HTTPConfig{})
	require.NoError(e.t, err)
	res, err := set.Do(e.ctx, connectors.Call{Kind: mt.KindTwilioSMS, Settings: map[string]string{"to": "+14155550100", "body": body}})
	require.NoError(e.t, err)
	return res.Receipt.ID
}

func TestTakeoverAfterACrash(t *testing.T) {
	t.Parallel()

	t.Run("AdoptsTheMessageTheDeadAttemptSent", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.claimAbandoned(e.key("sms"), "send_sms", smsArgs)
		sid := e.sendDirect("Your technician arrives at 9.")

		resp, err := e.invoke("send_sms", e.key("sms"), smsArgs)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
		require.Equal(t, sid, resp.Observation.Receipt.ID)
		require.Equal(t, 1, e.standins.Twilio.CountMessages())
	})

	t.Run("SendsWhenTheProviderHasNoTrace", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.claimAbandoned(e.key("sms"), "send_sms", smsArgs)

		resp, err := e.invoke("send_sms", e.key("sms"), smsArgs)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
		require.Equal(t, 1, e.standins.Twilio.CountMessages())
		require.Equal(t, []string{"absent"}, e.reconciliationKinds(e.key("sms")))
	})

	t.Run("NeverAdoptsAMessageAnotherKeyOwns", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		first, err := e.invoke("send_sms", e.key("first"), smsArgs)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, first.State)
		e.claimAbandoned(e.key("second"), "send_sms", smsArgs)

		second, err := e.invoke("send_sms", e.key("second"), smsArgs)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, second.State, "%+v", second.Observation)
		require.NotEqual(t, first.Observation.Receipt.ID, second.Observation.Receipt.ID)
		require.Equal(t, 2, e.standins.Twilio.CountMessages(), "the same text, sent for two effects")
	})

	t.Run("SeveralMatchesGoToAHuman", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.claimAbandoned(e.key("sms"), "send_sms", smsArgs)
		e.sendDirect("Your technician arrives at 9.")
		e.sendDirect("Your technician arrives at 9.")

		resp, err := e.invoke("send_sms", e.key("sms"), smsArgs)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationNeedsReconciliation, resp.State, "%+v", resp.Observation)
		require.Contains(t, e.requireHeld(e.key("sms")).Reason, "2 matching records")
		require.Equal(t, 2, e.standins.Twilio.CountMessages(), "nothing sent")
	})

	t.Run("EmailIsHeldNeverResent", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.claimAbandoned(e.key("mail"), "email_property_manager", emailArgs)

		resp, err := e.invoke("email_property_manager", e.key("mail"), emailArgs)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationNeedsReconciliation, resp.State, "%+v", resp.Observation)
		require.Zero(t, e.standins.SES.CountEmails())
	})
}

// TestTwilioEmptySearchRightAfterALostAnswerLooksAgainLater: a search
// straight after a lost answer proves nothing, so the claim is kept and the
// retry, once the listing lag has passed, finds the provider's records
// complete and empty and sends once.
func TestTwilioEmptySearchRightAfterALostAnswerLooksAgainLater(t *testing.T) {
	t.Parallel()
	e := setup(t, withShortProviderTimeout)
	// The connection drops before Twilio acts: nothing was sent.
	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Reset, Method: http.MethodPost}))

	resp := e.invokeToEnd("send_sms", e.key("sms"), smsArgs)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "sent once, after the search proved the first send absent")
	require.Equal(t, e.standins.Twilio.Messages()[0].SID, resp.Observation.Receipt.ID)
	require.Equal(t, []string{"absent"}, e.reconciliationKinds(e.key("sms")), "never held for a human")
}

func TestCheckSettlesAHeldMessageFromTwilioRecords(t *testing.T) {
	t.Parallel()
	e := setup(t, withShortProviderTimeout)
	// Every send is dropped before Twilio acts, until the attempts run out
	// and the key is held.
	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Reset, Method: http.MethodPost, Times: 100}))

	resp := e.invokeToEnd("send_sms", e.key("sms"), smsArgs)
	require.Equal(t, mt.InvocationNeedsReconciliation, resp.State, "%+v", resp.Observation)
	require.True(t, e.requireHeld(e.key("sms")).Searchable)
	require.Zero(t, e.standins.Twilio.CountMessages())

	r, err := e.ops.CheckReconciliation(e.ctx, e.key("sms"))
	require.NoError(t, err)
	require.Equal(t, string(mt.EffectFailed), r.Status, "a complete search found nothing")
	kinds := e.reconciliationKinds(e.key("sms"))
	require.Equal(t, []string{"escalated", "absent"}, kinds[len(kinds)-2:])
	done, err := e.agent.Invocation(e.ctx, resp.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.CodeNotDelivered, done.Observation.Code)
	require.Zero(t, e.standins.Twilio.CountMessages())
}

func TestReconciliationNeedsAnOperator(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, err := e.agent.Reconciliations(e.ctx)
	require.True(t, apiclient.IsRefusal(err, mt.CodeUnauthorized), "%v", err)
	_, err = e.ops.ResolveReconciliation(e.ctx, "no-such-key", apitype.OutcomeDelivered, "r")
	require.True(t, apiclient.IsRefusal(err, mt.CodeNotFound), "%v", err)
	_, err = apiclient.New(e.url, tools.DemoOpsKey, apiclient.Options{}).ResolveReconciliation(e.ctx, "k", "maybe", "r")
	require.True(t, apiclient.IsRefusal(err, mt.CodeInvalidRequest), "%v", err)
}
