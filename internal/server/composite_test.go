package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

const (
	emergencyPageArgs = `{"reason":"Water through the ceiling","urgency":"emergency","callback_number":"+14155550100"}`
	emergencyNotice   = "If this is an emergency, hang up and dial 911."
)

// down makes a provider answer 503 to every new message until it is reset;
// its records can still be read.
func down(t *testing.T, f *fault.Injector) {
	t.Helper()
	require.NoError(t, f.Add(fault.Rule{Action: fault.Fail, Status: http.StatusServiceUnavailable, Method: http.MethodPost, Times: 10000}))
}

// partsOf decodes the per-part states a partial observation carries.
func partsOf(t *testing.T, obs mt.Observation) map[string]map[string]string {
	t.Helper()
	var p struct {
		Parts map[string]map[string]string `json:"parts"`
	}
	require.NoError(t, json.Unmarshal(obs.Payload, &p))
	return p.Parts
}

// awaitCallback waits until the agent's callback for the invocation is
// delivered and returns the invocation as it then stands.
func (e *env) awaitCallback(id string) apiclient.Response {
	e.t.Helper()
	var got apiclient.Response
	require.Eventually(e.t, func() bool {
		var err error
		got, err = e.agent.Invocation(e.ctx, id)
		// The invocation and its callback are read one after the other:
		// wait for both, not for a callback read after a stale state.
		return err == nil && got.Callback != nil && got.Callback.Status == "delivered" && got.State != mt.InvocationRunning
	}, 90*time.Second, 100*time.Millisecond, "the late part is reported to the agent")
	return got
}

// faultOver adds a fault rule at a stand-in over its HTTP admin API, as an
// operator drilling an outage would.
func (e *env) faultOver(base, rule string) {
	e.t.Helper()
	resp, err := http.Post(base+fault.AdminPath, "application/json", strings.NewReader(rule))
	require.NoError(e.t, err)
	require.NoError(e.t, resp.Body.Close())
	require.Equal(e.t, http.StatusCreated, resp.StatusCode)
}

// clearFaults drops every fault rule at a stand-in: the provider returns.
func (e *env) clearFaults(base string) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, http.MethodDelete, base+fault.AdminPath, nil)
	require.NoError(e.t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	require.NoError(e.t, resp.Body.Close())
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
}

// withoutEmailResend is the demo catalog with the page's email left to
// ADR 9: an email whose outcome is unknown is held, never resent.
func withoutEmailResend(o *options) {
	o.catalog = []byte(strings.Replace(string(tools.DemoCatalogYAML), "Twilio first.\n    on_unknown: resend\n", "Twilio first.\n", 1))
}

// TestEmergencyPageWithSESDownSendsTheTextTellsTheCallerAndTheEmailOnceSESReturns
// is issue 19's scenario: SES answers 503 to an emergency page. The text
// page goes out once and the caller hears it, with its reference and the
// 911 notice. SES cannot be searched, but the catalog has the page's email
// sent again when its outcome is unknown (ADR 14): it is retried after the
// answer and delivered once SES returns, its receipt saying it was resent,
// and the agent hears the final outcome at its callback.
func TestEmergencyPageWithSESDownSendsTheTextTellsTheCallerAndTheEmailOnceSESReturns(t *testing.T) {
	t.Parallel()
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	e := setup(t, withCallbackTo(srv.URL+"/cb"), func(o *options) { o.leaseTTL = 2 * time.Second })
	ses := e.standins.SESURL()
	e.faultOver(ses, `{"action":"fail","status":503,"method":"POST","times":100000}`)

	resp, err := e.invoke("escalate_to_human", e.key("page"), emergencyPageArgs)
	require.NoError(t, err)
	require.True(t, resp.Pending, "the email is still being sent: %+v", resp.Observation)
	require.Equal(t, mt.InvocationRunning, resp.State)
	obs := resp.Observation
	require.Equal(t, mt.CodePartlyDelivered, obs.Code)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "exactly one text")
	require.Zero(t, e.standins.SES.CountEmails())
	sid := e.standins.Twilio.Messages()[0].SID
	require.Contains(t, obs.Wording, "by text (reference "+sid+")", "the text that went out is named with its reference")
	require.Contains(t, obs.Wording, "email page hasn't gone through yet")
	require.Contains(t, obs.Wording, emergencyNotice)
	parts := partsOf(t, obs)
	require.Equal(t, "delivered", parts["sms"]["state"])
	require.Equal(t, sid, parts["sms"]["receipt_id"])
	require.Equal(t, "retrying", parts["email"]["state"])
	require.NotNil(t, resp.Callback, "the agent is owed the outcome of the email")

	// Resending an email whose fate is unknown is on the record, with the
	// duplicate it risks.
	events, err := e.store.ReconciliationEventList(e.ctx, e.key("page")+"#email")
	require.NoError(t, err)
	require.NotEmpty(t, events)
	require.Contains(t, events[0].Reason, "a duplicate is possible")

	e.clearFaults(ses) // SES returns
	require.Eventually(t, func() bool { return e.standins.SES.CountEmails() >= 1 }, 90*time.Second, 100*time.Millisecond)
	done := e.awaitCallback(resp.InvocationID)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	require.Equal(t, 1, e.standins.SES.CountEmails(), "exactly one email")
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "the text was never sent again")
	receipt := done.Observation.Receipt
	require.Equal(t, sid, receipt.Fields["message_sid"])
	require.Equal(t, e.standins.SES.Emails()[0].MessageID, receipt.Fields["message_id"])
	require.Equal(t, "true", receipt.Fields["resent_after_unknown"], "the receipt says the email followed an unknown answer")
	email, err := e.store.EffectGet(e.ctx, e.key("page")+"#email")
	require.NoError(t, err)
	require.Equal(t, mt.EffectSucceeded, email.Status)
	require.Equal(t, "true", email.Receipt.Fields["resent_after_unknown"])

	_, _, accepted := rc.snapshot()
	require.Len(t, accepted, 1)
	require.Equal(t, resp.InvocationID, accepted[0].invocationID)
	var posted mt.Observation
	require.NoError(t, json.Unmarshal(accepted[0].body, &posted))
	require.Equal(t, mt.StatusSuccess, posted.Status)
	require.Equal(t, receipt.Fields["message_id"], posted.Receipt.Fields["message_id"])
}

// TestPageWhoseEmailIsNotResentHoldsOnlyTheEmail: a catalog that does not
// opt the email in keeps ADR 9. A 503 proves nothing about the email and
// SES cannot be searched, so the email part alone is held for a human,
// never resent; the caller hears the text that went out and the notice.
func TestPageWhoseEmailIsNotResentHoldsOnlyTheEmail(t *testing.T) {
	t.Parallel()
	e := setup(t, withoutEmailResend)
	down(t, e.standins.SES.Faults())

	resp := e.invokeToEnd("escalate_to_human", e.key("page"), emergencyPageArgs)
	require.Equal(t, mt.InvocationNeedsReconciliation, resp.State, "%+v", resp.Observation)
	obs := resp.Observation
	require.Equal(t, mt.CodePartlyDelivered, obs.Code)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "exactly one text")
	sid := e.standins.Twilio.Messages()[0].SID
	require.Contains(t, obs.Wording, "by text (reference "+sid+")")
	require.Contains(t, obs.Wording, emergencyNotice)
	require.Equal(t, "unknown", partsOf(t, obs)["email"]["state"])
	require.Contains(t, e.requireHeld(e.key("page")+"#email").Reason, "cannot be searched")

	// The same key again sends nothing.
	e.standins.SES.Faults().Reset()
	again, err := e.invoke("escalate_to_human", e.key("page"), emergencyPageArgs)
	require.NoError(t, err)
	require.Equal(t, resp.Observation.Wording, again.Observation.Wording)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
	require.Zero(t, e.standins.SES.CountEmails(), "an email whose fate is unknown is never resent")
}

// TestPageEmailLostAfterSESSentItIsResentAndSaysSo is the price of the
// opt-in: SES sent the email and its answer was lost (a 500 after the
// effect). The email is sent again, so the inbox holds two, and the
// receipt and the reconciliation log say a duplicate is possible.
func TestPageEmailLostAfterSESSentItIsResentAndSaysSo(t *testing.T) {
	t.Parallel()
	e := setup(t)
	require.NoError(t, e.standins.SES.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusInternalServerError, Phase: fault.AfterEffect}))

	resp := e.invokeToEnd("escalate_to_human", e.key("page"), emergencyPageArgs)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
	require.Equal(t, 2, e.standins.SES.CountEmails(), "at least once: the lost answer's email and the resend")
	require.Equal(t, "true", resp.Observation.Receipt.Fields["resent_after_unknown"])
	require.Equal(t, e.standins.SES.Emails()[1].MessageID, resp.Observation.Receipt.Fields["message_id"])
	events, err := e.store.ReconciliationEventList(e.ctx, e.key("page")+"#email")
	require.NoError(t, err)
	require.NotEmpty(t, events)
	require.Contains(t, events[0].Reason, "a duplicate is possible")
}

// TestEmergencyPageWithTwilioDownSendsTheEmailAndTheTextOnceItReturns: the
// email goes out and the caller hears so with the 911 notice; the text is
// reconciled and retried after the answer, sent once when Twilio is back,
// and the agent hears the final outcome at its callback.
func TestEmergencyPageWithTwilioDownSendsTheEmailAndTheTextOnceItReturns(t *testing.T) {
	t.Parallel()
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	e := setup(t, withCallbackTo(srv.URL+"/cb"), func(o *options) { o.leaseTTL = 2 * time.Second })
	down(t, e.standins.Twilio.Faults())

	resp, err := e.invoke("escalate_to_human", e.key("page"), emergencyPageArgs)
	require.NoError(t, err)
	require.True(t, resp.Pending, "the text is still being sent: %+v", resp.Observation)
	require.Equal(t, mt.InvocationRunning, resp.State)
	require.Equal(t, mt.CodePartlyDelivered, resp.Observation.Code)
	require.Equal(t, 1, e.standins.SES.CountEmails(), "exactly one email")
	require.Zero(t, e.standins.Twilio.CountMessages())
	mid := e.standins.SES.Emails()[0].MessageID
	require.Contains(t, resp.Observation.Wording, "by email (reference "+mid+")")
	require.Contains(t, resp.Observation.Wording, "text page hasn't gone through yet")
	require.Contains(t, resp.Observation.Wording, emergencyNotice)
	require.Equal(t, "retrying", partsOf(t, resp.Observation)["sms"]["state"])
	require.NotNil(t, resp.Callback, "the agent is owed the outcome of the remaining part")

	// Asking again while the text is retried gives the same answer.
	mid2, err := e.agent.Invocation(e.ctx, resp.InvocationID)
	require.NoError(t, err)
	require.True(t, mid2.Pending)
	require.Equal(t, resp.Observation.Wording, mid2.Observation.Wording)

	e.standins.Twilio.Faults().Reset() // Twilio returns
	done := e.awaitCallback(resp.InvocationID)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "exactly one text")
	require.Equal(t, 1, e.standins.SES.CountEmails(), "the email was never sent again")
	require.Equal(t, e.standins.Twilio.Messages()[0].SID, done.Observation.Receipt.Fields["message_sid"])
	require.Equal(t, mid, done.Observation.Receipt.Fields["message_id"])
	require.NotContains(t, done.Observation.Wording, emergencyNotice, "full success needs no notice")

	_, _, accepted := rc.snapshot()
	require.Len(t, accepted, 1)
	require.Equal(t, resp.InvocationID, accepted[0].invocationID)
	var posted mt.Observation
	require.NoError(t, json.Unmarshal(accepted[0].body, &posted))
	require.Equal(t, mt.StatusSuccess, posted.Status)
}

// TestPageWithBothProvidersDownIsHeldWithTheNotice: nothing is known to
// have gone out; the caller hears that with the safety notice, and a
// routine page hears it without.
func TestPageWithBothProvidersDownIsHeldWithTheNotice(t *testing.T) {
	t.Parallel()
	e := setup(t)
	down(t, e.standins.Twilio.Faults())
	down(t, e.standins.SES.Faults())

	resp := e.invokeToEnd("escalate_to_human", e.key("page"), emergencyPageArgs)
	require.Equal(t, mt.InvocationNeedsReconciliation, resp.State, "%+v", resp.Observation)
	require.True(t, strings.HasSuffix(resp.Observation.Wording, emergencyNotice), resp.Observation.Wording)
	require.Zero(t, e.standins.Twilio.CountMessages())
	require.Zero(t, e.standins.SES.CountEmails())

	routine := e.invokeToEnd("escalate_to_human", e.key("routine"), pageArgs)
	require.Equal(t, mt.InvocationNeedsReconciliation, routine.State)
	require.NotContains(t, routine.Observation.Wording, "911")
}

// TestLostEmailOfAPageIsHeldPerPartNamingTheText: SES accepted the email
// and its answer was lost, on a page whose email is not resent. The email part alone is held for a human; the
// text that went out is named, with the notice.
func TestLostEmailOfAPageIsHeldPerPartNamingTheText(t *testing.T) {
	t.Parallel()
	e := setup(t, withoutEmailResend)
	require.NoError(t, e.standins.SES.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusInternalServerError, Phase: fault.AfterEffect}))

	resp := e.invokeToEnd("escalate_to_human", e.key("page"), emergencyPageArgs)
	require.Equal(t, mt.InvocationNeedsReconciliation, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
	require.Equal(t, 1, e.standins.SES.CountEmails(), "never resent")
	sid := e.standins.Twilio.Messages()[0].SID
	require.Contains(t, resp.Observation.Wording, sid)
	require.Contains(t, resp.Observation.Wording, emergencyNotice)
	require.Equal(t, "unknown", partsOf(t, resp.Observation)["email"]["state"])

	held := e.requireHeld(e.key("page") + "#email")
	require.Contains(t, held.Reason, "cannot be searched")
	sms, err := e.store.EffectGet(e.ctx, e.key("page")+"#sms")
	require.NoError(t, err)
	require.Equal(t, mt.EffectSucceeded, sms.Status, "the text is not held with it")

	// The page is decided part by part: the parent follows from them.
	_, err = e.ops.ResolveReconciliation(e.ctx, e.key("page"), apitype.OutcomeDelivered, "found in the inbox")
	var apiErr *apiclient.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusConflict, apiErr.StatusCode)
	_, err = e.ops.ResolveReconciliation(e.ctx, e.key("page")+"#email", apitype.OutcomeDelivered, "found once in the on-call inbox")
	require.NoError(t, err)
	done, err := e.agent.Invocation(e.ctx, resp.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	require.Equal(t, sid, done.Observation.Receipt.Fields["message_sid"])
	parent, err := e.store.EffectGet(e.ctx, e.key("page"))
	require.NoError(t, err)
	require.Equal(t, mt.EffectSucceeded, parent.Status)
	require.Equal(t, 1, e.standins.SES.CountEmails())
}

// TestPageWhoseTextIsStillBeingReconciledIsDeliveredWithoutWaitingOutTheLease:
// Twilio is down, its records too, so when the call answers with the email
// the text's outcome is still being looked for under a claim kept for the
// next attempt. The delivery after the answer takes that claim over at
// once, rather than waiting for its lease to run out, and sends the text
// exactly once when Twilio returns.
func TestPageWhoseTextIsStillBeingReconciledIsDeliveredWithoutWaitingOutTheLease(t *testing.T) {
	t.Parallel()
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	e := setup(t, withCallbackTo(srv.URL+"/cb")) // the default lease: 30s
	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusServiceUnavailable, Times: 10000}))

	resp, err := e.invoke("escalate_to_human", e.key("page"), emergencyPageArgs)
	require.NoError(t, err)
	require.True(t, resp.Pending, "%+v", resp.Observation)
	require.Equal(t, mt.CodePartlyDelivered, resp.Observation.Code)
	require.Equal(t, 1, e.standins.SES.CountEmails())
	require.Equal(t, "retrying", partsOf(t, resp.Observation)["sms"]["state"])

	e.standins.Twilio.Faults().Reset() // Twilio and its records return
	var done apiclient.Response
	require.Eventually(t, func() bool {
		done, err = e.agent.Invocation(e.ctx, resp.InvocationID)
		return err == nil && done.Callback != nil && done.Callback.Status == "delivered" && done.State != mt.InvocationRunning
	}, 20*time.Second, 100*time.Millisecond, "the text goes out well before the 30s lease it was kept under runs out")
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "exactly one text")
	require.Equal(t, 1, e.standins.SES.CountEmails(), "exactly one email")
}
