package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/api"
	"github.com/maestro-run/maestro/internal/standin/fault"
	"github.com/maestro-run/maestro/internal/standin/twilio"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// A text the agent was told was sent, and that the carrier then could not
// deliver, is followed up: the invocation answers a follow-up observation
// the agent can relay next to the original one, the session shows the
// call's delivery as undelivered, and ops finds it in the reconciliation
// list. Every status arrives by the stand-in's own signed callbacks.
func TestUndeliveredTextIsFollowedUpEverywhere(t *testing.T) {
	t.Parallel()
	e := setup(t)
	to := sessionFacts["caller_number"]
	e.standins.Twilio.Undeliverable(to)

	sent, err := e.invoke("send_sms", e.key("sms"), `{"to":"`+to+`","body":"Your technician is on the way."}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, sent.State, sent.Observation.Summary)
	require.Equal(t, mt.StatusSuccess, sent.Observation.Status, "Twilio accepted it, which is what the agent was told")

	got := waitForInvocation(t, e, sent.InvocationID, func(r apiclient.Response) bool { return r.FollowUp != nil })
	require.Equal(t, sent.Observation, got.Observation, "the original observation stays visible as it was")
	require.Equal(t, mt.MessageUndelivered, got.Delivery.Status)
	require.True(t, got.Delivery.Final)
	require.True(t, got.Delivery.Failed)
	require.Equal(t, "30003", got.Delivery.ErrorCode)
	require.Equal(t, sent.Observation.Receipt.Fields["message_sid"], got.Delivery.MessageID)

	f := got.FollowUp
	require.Equal(t, mt.StatusError, f.Status)
	require.Equal(t, mt.CodeDeliveryFailed, f.Code)
	require.Equal(t, "The text to "+to+" did not go through.", f.Wording)
	require.Contains(t, f.Summary, "undelivered")
	require.NotNil(t, f.NextActions)
	require.NotEmpty(t, f.NextActions.RootCause)
	require.NotEmpty(t, f.NextActions.Remediation)
	require.NotEmpty(t, f.NextActions.StopCondition)
	require.Equal(t, sent.InvocationID, f.Source.InvocationID)

	// The same key answers the same, follow-up included, and sends nothing.
	again, err := e.invoke("send_sms", e.key("sms"), `{"to":"`+to+`","body":"Your technician is on the way."}`)
	require.NoError(t, err)
	require.Equal(t, f, again.FollowUp)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Len(t, sess.Calls, 1)
	require.NotNil(t, sess.Calls[0].Delivery)
	require.Equal(t, mt.MessageUndelivered, sess.Calls[0].Delivery.Status)
	require.Equal(t, f.Summary, sess.Calls[0].FollowUp)

	list, err := e.ops.Reconciliations(e.ctx)
	require.NoError(t, err)
	var listed *apitype.Reconciliation
	for i, r := range list.Reconciliations {
		if r.OperationKey == e.key("sms") {
			listed = &list.Reconciliations[i]
		}
	}
	require.NotNil(t, listed, "ops does not see the undelivered text")
	require.Equal(t, string(mt.EffectSucceeded), listed.Status)
	require.Equal(t, mt.MessageUndelivered, listed.Delivery.Status)
	require.Contains(t, listed.Reason, "undelivered")
	shown, err := e.ops.Reconciliation(e.ctx, e.key("sms"))
	require.NoError(t, err)
	require.Equal(t, mt.MessageUndelivered, shown.Delivery.Status)
}

// A delivered text carries its delivery and no follow-up, and is not on
// ops' list.
func TestDeliveredTextHasNoFollowUp(t *testing.T) {
	t.Parallel()
	e := setup(t)
	sent, err := e.invoke("send_sms", e.key("sms"), `{"to":"`+sessionFacts["caller_number"]+`","body":"See you at 3."}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, sent.State, sent.Observation.Summary)

	got := waitForInvocation(t, e, sent.InvocationID, func(r apiclient.Response) bool {
		return r.Delivery != nil && r.Delivery.Status == mt.MessageDelivered
	})
	require.Nil(t, got.FollowUp)
	require.False(t, got.Delivery.Failed)
	list, err := e.ops.Reconciliations(e.ctx)
	require.NoError(t, err)
	for _, r := range list.Reconciliations {
		require.NotEqual(t, e.key("sms"), r.OperationKey)
	}
}

// Twilio's callbacks reach maestro while the send's answer is still on its
// way (here held by a fault after Twilio created the message), so before
// the ledger has settled the effect: they are kept by SID and joined to the
// send once it settles. Afterwards a replayed callback and one arriving
// out of order (sent after delivered) change nothing.
func TestStatusCallbacksBeforeSettleReplayedAndOutOfOrder(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *options) { o.providerTimeout = 30 * time.Second })
	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect, Method: http.MethodPost}))

	type result struct {
		resp apiclient.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := e.invoke("send_sms", e.key("sms"), `{"to":"`+sessionFacts["caller_number"]+`","body":"Held answer."}`)
		done <- result{resp, err}
	}()
	require.NoError(t, e.standins.Twilio.Faults().WaitHeld(e.ctx, 1))
	msgs := e.standins.Twilio.Messages()
	require.Len(t, msgs, 1)
	sid := msgs[0].SID

	require.Eventually(t, func() bool {
		ms, err := e.store.MessageStatusGet(e.ctx, "twilio", sid)
		return err == nil && ms.Status == mt.MessageDelivered
	}, 10*time.Second, 20*time.Millisecond, "the callbacks never reached maestro")
	eff, err := e.store.EffectGet(e.ctx, e.key("sms"))
	require.NoError(t, err)
	require.Equal(t, mt.EffectInProgress, eff.Status, "the callbacks arrived before the ledger settled the send")

	e.standins.Twilio.Faults().Release()
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, mt.InvocationSucceeded, res.resp.State, res.resp.Observation.Summary)
	require.Equal(t, sid, res.resp.Observation.Receipt.Fields["message_sid"])
	require.NotNil(t, res.resp.Delivery, "the early status is joined to the settled send")
	require.Equal(t, mt.MessageDelivered, res.resp.Delivery.Status)

	delivered := statusForm(sid, "delivered")
	ack, code := postStatus(t, e, delivered, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "replayed", ack.Outcome, "the stand-in already reported delivered")

	ack, code = postStatus(t, e, statusForm(sid, "sending"), "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, apitype.StatusCallbackAck{MessageID: sid, Status: mt.MessageDelivered, Outcome: "stale"}, ack)

	// Delivered, then sent, for a message no ledger record names yet.
	ack, _ = postStatus(t, e, statusForm("SM_out_of_order", "delivered"), "")
	require.Equal(t, "recorded", ack.Outcome)
	ack, _ = postStatus(t, e, statusForm("SM_out_of_order", "sent"), "")
	require.Equal(t, apitype.StatusCallbackAck{MessageID: "SM_out_of_order", Status: mt.MessageDelivered, Outcome: "stale"}, ack)

	ack, code = postStatus(t, e, statusForm(sid, "undelivered"), "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, mt.MessageDelivered, ack.Status, "a final status never changes")

	_, code = postStatus(t, e, statusForm(sid, "failed"), "forgedtoken")
	require.Equal(t, http.StatusForbidden, code)

	got, err := e.agent.Invocation(e.ctx, res.resp.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.MessageDelivered, got.Delivery.Status)
	require.Nil(t, got.FollowUp)
}

// waitForInvocation polls the invocation until done holds.
func waitForInvocation(t *testing.T, e *env, id string, done func(apiclient.Response) bool) apiclient.Response {
	t.Helper()
	var got apiclient.Response
	require.Eventually(t, func() bool {
		r, err := e.agent.Invocation(e.ctx, id)
		if err != nil {
			return false
		}
		got = r
		return done(r)
	}, 15*time.Second, 50*time.Millisecond, "the invocation never showed the delivery status")
	return got
}

func statusForm(sid, status string) url.Values {
	return url.Values{
		"AccountSid":    {twilio.DefaultAccountSID},
		"MessageSid":    {sid},
		"MessageStatus": {status},
		"To":            {sessionFacts["caller_number"]},
	}
}

// postStatus posts a status callback to maestro as Twilio would, signed
// over the public URL with the stand-in's auth token, or with token when
// one is given.
func postStatus(t *testing.T, e *env, form url.Values, token string) (apitype.StatusCallbackAck, int) {
	t.Helper()
	if token == "" {
		token = e.standins.Twilio.AuthToken()
	}
	target := api.TwilioStatusCallbackURL(e.url)
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", twilio.Signature(token, target, form))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var ack apitype.StatusCallbackAck
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&ack))
	}
	return ack, resp.StatusCode
}
