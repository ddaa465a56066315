package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/standin/fault"
	"github.com/maestro-run/maestro/internal/syncbuf"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// faultAdmin adds or clears fault rules on a stand-in over its admin
// endpoint, as an operator staging an outage would.
func (e *env) faultAdmin(base, method, body string) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, method, base+fault.AdminPath, strings.NewReader(body))
	require.NoError(e.t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	require.NoError(e.t, resp.Body.Close())
	require.Less(e.t, resp.StatusCode, 300, "%s %s", method, body)
}

// endCall ends the test's call with no transcript work.
func (e *env) endCall() {
	e.t.Helper()
	_, err := e.agent.End(e.ctx, e.session, apitype.EndRequest{})
	require.NoError(e.t, err)
}

// postCallItem waits until the session's only post-call item satisfies ok.
func (e *env) postCallItem(what string, ok func(apitype.PostCallItem) bool) apitype.Session {
	e.t.Helper()
	var (
		sess apitype.Session
		err  error
	)
	require.Eventually(e.t, func() bool {
		sess, err = e.agent.Session(e.ctx, e.session)
		return err == nil && len(sess.PostCall) == 1 && ok(sess.PostCall[0])
	}, 3*time.Minute, 50*time.Millisecond, "%s: %+v (%v)", what, sess.PostCall, err)
	return sess
}

// A message left during a SES outage is kept, with nobody's help: each
// 503 proves nothing and SES cannot be searched, but deliver_message opts
// in to on_unknown: resend, so each held attempt is settled by that policy
// (leaving nothing for ops) and the channel is tried again under its next
// key; once the outage ends the message is delivered exactly once, and the
// chain shows the unknown attempts and how they were settled.
func TestDeferredMessageIsDeliveredOnceAfterASESOutage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ses := e.standins.SESURL()
	e.faultAdmin(ses, http.MethodPost, `{"action":"fail","status":503,"times":1000,"path":"/v2/email/outbound-emails"}`)

	resp, err := e.invoke("take_message", e.key("msg"), `{"message":"The hallway light is out on the third floor.","callback_number":"+14155550100"}`)
	require.NoError(t, err)
	require.Equal(t, "I'll make sure the team gets your message.", resp.Observation.Wording)
	e.endCall()

	sess := e.postCallItem("two attempts fail during the outage", func(it apitype.PostCallItem) bool { return len(it.Attempts) >= 2 })
	require.Equal(t, "pending", sess.PostCall[0].Status)
	require.Equal(t, "recorded", sess.Deferred[0].Status, "not failed: the promise is still being kept")
	require.Zero(t, e.standins.SES.CountEmails())

	// The outage ends.
	e.faultAdmin(ses, http.MethodDelete, "")
	e.waitPostCall()
	sess = e.postCallItem("delivered", func(it apitype.PostCallItem) bool { return it.Status == "delivered" })
	require.Equal(t, 1, e.standins.SES.CountEmails(), "delivered exactly once")
	it := sess.PostCall[0]
	require.Equal(t, "ses", it.Receipt.Provider)
	last := it.Attempts[len(it.Attempts)-1]
	require.Equal(t, workflows.AttemptOperationKey(e.session, it.Key, len(it.Attempts)-1), last.OperationKey, "under the next attempt's own key")
	require.Equal(t, it.Receipt.ID, last.Receipt.ID)
	var resent int
	for _, a := range it.Attempts[:len(it.Attempts)-1] {
		require.Equal(t, "deliver_message", a.Tool)
		if a.Outcome == string(workflows.AttemptUnknown) {
			resent++
			require.Equal(t, "policy:on_unknown", a.ResolvedBy, "%+v", a)
			require.Contains(t, a.Resolution, "a duplicate is possible")
		}
	}
	require.Positive(t, resent, "the outage left unknown attempts, settled by policy: %+v", it.Attempts)
	require.Equal(t, "delivered", sess.Deferred[0].Status)
	require.Equal(t, it.Receipt.ID, sess.Deferred[0].Receipt.ID)

	list, err := e.ops.Reconciliations(e.ctx)
	require.NoError(t, err)
	require.Empty(t, list.Reconciliations, "nothing is left for ops")
}

// A tool that keeps on_unknown: hold is never resent on the strength of a
// 503: its attempt is held for reconciliation, and only once ops finds it
// did not arrive does the next attempt, under its own key, deliver it.
func TestHeldAttemptIsReconciledNotResent(t *testing.T) {
	t.Parallel()
	cat := strings.Replace(string(tools.DemoCatalogYAML), "(ADR 13).\n    on_unknown: resend\n", "(ADR 13).\n    on_unknown: hold\n", 1)
	require.NotEqual(t, string(tools.DemoCatalogYAML), cat)
	e := setup(t, func(o *options) { o.catalog = []byte(cat) })
	ses := e.standins.SESURL()
	e.faultAdmin(ses, http.MethodPost, `{"action":"fail","status":503,"times":1000,"path":"/v2/email/outbound-emails"}`)

	_, err := e.invoke("take_message", e.key("msg"), `{"message":"The hallway light is out on the third floor.","callback_number":"+14155550100"}`)
	require.NoError(t, err)
	e.endCall()

	first := workflows.PostCallOperationKey(e.session, "def_")
	var attemptKey string
	sess := e.postCallItem("the first attempt is held", func(it apitype.PostCallItem) bool {
		if len(it.Attempts) == 0 || it.Attempts[0].Outcome != string(workflows.AttemptUnknown) {
			return false
		}
		attemptKey = it.Attempts[0].OperationKey
		return true
	})
	require.True(t, strings.HasPrefix(attemptKey, first))
	require.Empty(t, sess.PostCall[0].Attempts[0].ResolvedBy)
	require.Equal(t, "pending", sess.PostCall[0].Status)
	held := e.requireHeld(attemptKey)
	require.Equal(t, "deliver_message", held.Tool)
	require.Zero(t, e.standins.SES.CountEmails())

	// The outage ends; nothing is resent on the strength of a 503.
	e.faultAdmin(ses, http.MethodDelete, "")
	require.Zero(t, e.standins.SES.CountEmails())
	_, err = e.ops.ResolveReconciliation(e.ctx, attemptKey, apitype.OutcomeNotDelivered, "SES answered 503 during its outage; the office mailbox has no such email")
	require.NoError(t, err)

	e.waitPostCall()
	sess = e.postCallItem("delivered", func(it apitype.PostCallItem) bool { return it.Status == "delivered" })
	require.Equal(t, 1, e.standins.SES.CountEmails(), "delivered exactly once")
	it := sess.PostCall[0]
	require.Len(t, it.Attempts, 3, "held, settled by ops, then delivered")
	last := it.Attempts[len(it.Attempts)-1]
	require.Equal(t, workflows.AttemptOperationKey(e.session, it.Key, 1), last.OperationKey, "under the next attempt's own key")
	require.Equal(t, it.Receipt.ID, last.Receipt.ID)
}

// SES refusing the message definitively is not the end of the promise:
// the catalog's fallback texts it to the office's on-call phone, and the
// session shows the chain.
func TestDeferredMessageRefusedBySESIsDeliveredByText(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, err := e.invoke("take_message", e.key("msg"), `{"message":"Leave the parcel at the door."}`)
	require.NoError(t, err)
	e.standins.SES.Faults().FailNext(20, http.StatusBadRequest)
	e.endCall()
	e.waitPostCall()

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	it := sess.PostCall[0]
	require.Equal(t, "delivered", it.Status, "%+v", it)
	require.Equal(t, "twilio", it.Receipt.Provider)
	require.Len(t, it.Attempts, 2)
	require.Equal(t, "deliver_message", it.Attempts[0].Tool)
	require.Equal(t, string(workflows.AttemptRefused), it.Attempts[0].Outcome)
	require.Equal(t, "request_callback", it.Attempts[1].Tool)
	require.Equal(t, "delivered", sess.Deferred[0].Status)
	require.Zero(t, e.standins.SES.CountEmails())
	msgs := e.standins.Twilio.Messages()
	require.Len(t, msgs, 1)
	require.Equal(t, "+15550100200", msgs[0].To)
	require.Contains(t, msgs[0].Body, "Leave the parcel at the door.")
}

// When every channel refuses, the message is held for a human: listed
// first for ops with the caller's words, the callback number and every
// attempt, logged at error level for the on-call role, and delivered by
// hand with a human-attested receipt.
func TestDeferredMessageNoChannelDeliversIsHeldForAHuman(t *testing.T) {
	t.Parallel()
	logs := &syncbuf.Buffer{}
	e := setup(t, func(o *options) { o.logs = logs })
	_, err := e.invoke("take_message", e.key("msg"), `{"message":"Gas smell in the hallway, please send someone"}`)
	require.NoError(t, err)
	e.standins.SES.Faults().FailNext(50, http.StatusBadRequest)
	e.standins.Twilio.Faults().FailNext(50, http.StatusBadRequest)
	e.endCall()
	e.waitPostCall()

	list, err := e.ops.Reconciliations(e.ctx)
	require.NoError(t, err)
	require.NotEmpty(t, list.Reconciliations)
	r := list.Reconciliations[0]
	require.Equal(t, "held", r.Status)
	require.NotNil(t, r.Held, "held post-call work is listed first")
	require.Equal(t, "Gas smell in the hallway, please send someone", r.Held.Words)
	require.Equal(t, sessionFacts["caller_number"], r.Held.CallbackNumber)
	require.True(t, r.Held.Urgent, "gas is urgent in the demo catalog")
	var tools []string
	for _, a := range r.Held.Attempts {
		tools = append(tools, a.Tool)
		require.Equal(t, string(workflows.AttemptRefused), a.Outcome)
	}
	require.Equal(t, []string{"deliver_message", "request_callback", "escalate_to_human"}, tools)
	require.Zero(t, e.standins.SES.CountEmails()+e.standins.Twilio.CountMessages())
	var paged bool
	for _, p := range pages(t, logs) {
		if p["item"] == r.Held.ItemKey {
			paged = true
			require.Equal(t, "ERROR", p["level"])
			require.Equal(t, "ops", p["role"])
		}
	}
	require.True(t, paged, "the on-call role is paged")
	m, err := e.ops.Metrics(e.ctx)
	require.NoError(t, err)
	require.Positive(t, m.PostCallHeldTotal, "the hold is counted")

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, "held", sess.Deferred[0].Status)

	_, err = e.ops.ResolveReconciliation(e.ctx, r.OperationKey, apitype.OutcomeNotDelivered, "gave up")
	requireRefusal(t, err, http.StatusUnprocessableEntity, mt.CodeInvalidRequest)
	done, err := e.ops.ResolveReconciliation(e.ctx, r.OperationKey, apitype.OutcomeDelivered, "phoned the on-call manager, who is on the way")
	require.NoError(t, err)
	require.Equal(t, "delivered", done.Status)
	require.Equal(t, "human-attested", done.Receipt.Provider)
	sess, err = e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, "delivered", sess.Deferred[0].Status)
	require.Equal(t, "human-attested", sess.Deferred[0].Receipt.Provider)
	_, err = e.ops.RetryReconciliation(e.ctx, r.OperationKey)
	requireRefusal(t, err, http.StatusConflict, mt.CodeNotHeld)
}

// An operator's retry, once the cause is fixed, delivers a held message
// under new keys and sends nothing twice.
func TestHeldMessageIsRetriedByAnOperator(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, err := e.invoke("take_message", e.key("msg"), `{"message":"Please renew my parking permit."}`)
	require.NoError(t, err)
	e.standins.SES.Faults().FailNext(50, http.StatusBadRequest)
	e.standins.Twilio.Faults().FailNext(50, http.StatusBadRequest)
	e.endCall()
	e.waitPostCall()
	key := workflows.PostCallHeldKey(e.session, e.postCallItem("held", func(it apitype.PostCallItem) bool { return it.Status == "held" }).PostCall[0].Key)

	e.standins.SES.Faults().Reset()
	e.standins.Twilio.Faults().Reset()
	retried, err := e.ops.RetryReconciliation(e.ctx, key)
	require.NoError(t, err)
	require.Equal(t, "pending", retried.Status)
	_, err = e.ops.RetryReconciliation(e.ctx, key)
	requireRefusal(t, err, http.StatusConflict, mt.CodeNotHeld)

	itemKey := e.postCallItem("pending", func(apitype.PostCallItem) bool { return true }).PostCall[0].Key
	require.NoError(t, e.temporal.GetWorkflow(e.ctx, workflows.PostCallRetryWorkflowID(e.session, itemKey, 3), "").Get(e.ctx, nil))
	sess := e.postCallItem("delivered", func(it apitype.PostCallItem) bool { return it.Status == "delivered" })
	it := sess.PostCall[0]
	require.Equal(t, "ses", it.Receipt.Provider)
	require.Len(t, it.Attempts, 4, "three refusals, then the retry")
	require.Equal(t, workflows.AttemptOperationKey(e.session, it.Key, 3), it.Attempts[3].OperationKey, "the retry's keys continue the item's")
	require.Equal(t, 1, e.standins.SES.CountEmails())
	require.Equal(t, "delivered", sess.Deferred[0].Status)
}

// A searchable provider is reconciled by search even for a tool that opts
// in to on_unknown: resend: Twilio queued the text and answered 500, the
// search adopts it, and nothing is resent.
func TestResendOptedTextIsReconciledBySearchNeverResent(t *testing.T) {
	t.Parallel()
	demo := string(tools.DemoCatalogYAML)
	i := strings.Index(demo, "  - name: request_callback\n")
	require.Positive(t, i)
	cat := demo[:i] + strings.Replace(demo[i:],
		"    reversibility: irreversible   # a text cannot be unsent\n",
		"    reversibility: irreversible   # a text cannot be unsent\n    on_unknown: resend\n", 1)
	require.NotEqual(t, demo, cat)
	e := setup(t, func(o *options) { o.catalog = []byte(cat) })
	_, err := e.invoke("take_message", e.key("msg"), `{"message":"Leave the parcel at the door."}`)
	require.NoError(t, err)
	e.standins.SES.Faults().FailNext(20, http.StatusBadRequest)
	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusInternalServerError, Phase: fault.AfterEffect}))
	e.endCall()
	e.waitPostCall()

	sess := e.postCallItem("delivered", func(it apitype.PostCallItem) bool { return it.Status == "delivered" })
	it := sess.PostCall[0]
	require.Equal(t, "twilio", it.Receipt.Provider)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "one text, not two")
	key := workflows.AttemptOperationKey(e.session, it.Key, 1)
	require.Equal(t, []string{"adopted"}, e.reconciliationKinds(key))
	for _, a := range it.Attempts {
		require.Empty(t, a.ResolvedBy, "%+v", a)
	}
}
