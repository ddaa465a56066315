package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// answerProvider is one provider of the classification table (ADR 9): the
// tool that reaches it, its fault injector and how to count its effects.
type answerProvider struct {
	name   string
	tool   string
	args   func(n int) string
	path   string
	faults func(*standin.Set) *fault.Injector
	count  func(*standin.Set) int
}

var answerProviders = []answerProvider{
	{
		name: "twilio", tool: "send_sms", path: "/2010-04-01/",
		args: func(n int) string {
			return fmt.Sprintf(`{"to":"+14155550100","body":"Your technician arrives at 9 (%d)."}`, n)
		},
		faults: func(s *standin.Set) *fault.Injector { return s.Twilio.Faults() },
		count:  func(s *standin.Set) int { return s.Twilio.CountMessages() },
	},
	{
		name: "ses", tool: "email_property_manager", path: "/v2/email/outbound-emails",
		args: func(n int) string {
			return fmt.Sprintf(`{"tenant_id":"t_100","summary":"The heating in unit 4B is out (%d)."}`, n)
		},
		faults: func(s *standin.Set) *fault.Injector { return s.SES.Faults() },
		count:  func(s *standin.Set) int { return s.SES.CountEmails() },
	},
	{
		name: "http", tool: "create_work_order", path: "/v1/work_orders",
		args: func(n int) string {
			return fmt.Sprintf(`{"tenant_id":"t_100","category":"hvac","description":"No heat (%d)","priority":"urgent"}`, n)
		},
		faults: func(s *standin.Set) *fault.Injector { return s.Sandbox.Faults() },
		count:  func(s *standin.Set) int { return s.Sandbox.CountWorkOrders() },
	},
}

// answerRow is one answer a provider can give, as a fault rule acting in
// either phase.
type answerRow struct {
	name string
	rule func(provider string) (fault.Rule, bool) // false: the answer cannot occur at this provider
}

func failWith(status int) func(string) (fault.Rule, bool) {
	return func(string) (fault.Rule, bool) { return fault.Rule{Action: fault.Fail, Status: status}, true }
}

var answerRows = []answerRow{
	{"4xx validation", func(p string) (fault.Rule, bool) {
		if p == "http" {
			return fault.Rule{Action: fault.Fail, Status: http.StatusUnprocessableEntity}, true
		}
		return fault.Rule{Action: fault.Fail, Status: http.StatusBadRequest}, true
	}},
	{"401", failWith(http.StatusUnauthorized)},
	{"403", failWith(http.StatusForbidden)},
	{"429", failWith(http.StatusTooManyRequests)},
	{"500", failWith(http.StatusInternalServerError)},
	{"503", failWith(http.StatusServiceUnavailable)},
	{"timeout", func(string) (fault.Rule, bool) { return fault.Rule{Action: fault.Hang}, true }},
	{"reset", func(string) (fault.Rule, bool) { return fault.Rule{Action: fault.Reset}, true }},
	{"2xx without receipt", func(p string) (fault.Rule, bool) {
		body := map[string]string{"twilio": `{"status":"queued"}`, "ses": `{}`, "http": `{"status":"open"}`}[p]
		return fault.Rule{Action: fault.Respond, Status: http.StatusOK, Body: body}, true
	}},
	{"unparsable 2xx", func(string) (fault.Rule, bool) {
		return fault.Rule{Action: fault.Respond, Status: http.StatusOK, Body: `<html>upstream says hi</html>`}, true
	}},
	{"2xx with failure status", func(p string) (fault.Rule, bool) {
		switch p {
		case "twilio":
			return fault.Rule{Action: fault.Respond, Status: http.StatusCreated,
				Body: `{"sid":"SM00000000000000000000000000000001","status":"failed","error_code":30003,"error_message":"Unreachable destination handset"}`}, true
		case "http":
			return fault.Rule{Action: fault.Respond, Status: http.StatusOK,
				Body: `{"id":"wo_failed","object":"work_order","status":"failed","failure_reason":"no technician covers this unit"}`}, true
		}
		// SendEmail answers with a message ID only: SES has no failure
		// status to give.
		return fault.Rule{}, false
	}},
}

// want is how a row must end: the invocation's state and code, and how
// many effects the provider holds.
type want struct {
	state   mt.InvocationState
	code    mt.Code
	effects int
}

var (
	succeeded = func(effects int) want { return want{mt.InvocationSucceeded, "", effects} }
	held      = func(effects int) want { return want{mt.InvocationNeedsReconciliation, mt.CodeOutcomeUnknown, effects} }
	failed    = func(code mt.Code, effects int) want { return want{mt.InvocationFailed, code, effects} }
)

// expected is the classification table itself (ADR 9), phase by phase:
// what maestro must make of each answer.
func expected(provider, row string, phase fault.Phase) want {
	after := 0
	if phase == fault.AfterEffect {
		after = 1
	}
	switch row {
	case "4xx validation":
		// A documented refusal is trusted: nothing is resent. After the
		// effect it is a provider breaking its own contract; the one
		// effect stands and nothing doubles it.
		return failed(mt.CodeProviderRejected, after)
	case "401", "403":
		return failed(mt.CodeMisconfigured, after)
	case "2xx with failure status":
		return failed(mt.CodeNotDelivered, after)
	}
	// Every other answer proves nothing.
	switch provider {
	case "twilio":
		// Searched: found and adopted after the effect; before it, the
		// claim is kept, and the search after the listing lag proves the
		// text absent, so it is sent once.
		return succeeded(1)
	case "http":
		if row == "timeout" && phase == fault.BeforeEffect {
			// The first request still holds its Idempotency-Key at the
			// service, so every replay is told "in progress": held.
			return held(0)
		}
		// Replayed under the same Idempotency-Key: the service answers
		// for the first request, or runs the one that never ran.
		return succeeded(1)
	}
	// SES cannot be searched and takes no idempotency key: a human.
	return held(after)
}

// TestEveryProviderAnswerEndsWithAtMostOneEffect drives every row of the
// classification table, with the fault before and after the provider's
// effect, through the API, the real connectors and the Execute activity,
// and counts effects at the stand-ins: exactly one, or none and an honest
// failure or hold; never two.
func TestEveryProviderAnswerEndsWithAtMostOneEffect(t *testing.T) {
	t.Parallel()
	for _, p := range answerProviders {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withShortProviderTimeout)
			n := 0
			// Rows share one stand-in and run in turn: a fault rule applies
			// to the next request whoever sends it.
			for _, row := range answerRows {
				for _, phase := range []fault.Phase{fault.BeforeEffect, fault.AfterEffect} {
					rule, ok := row.rule(p.name)
					if !ok {
						continue
					}
					n++
					name := fmt.Sprintf("%s/%s/%s", p.name, row.name, phase)
					rule.Phase, rule.Method, rule.Path = phase, http.MethodPost, p.path
					require.NoError(t, p.faults(e.standins).Add(rule), name)
					before := p.count(e.standins)

					got := e.invokeToEnd(p.tool, e.key(fmt.Sprintf("%s-%d", p.name, n)), p.args(n))
					w := expected(p.name, row.name, phase)
					require.Equal(t, w.state, got.State, "%s: %+v", name, got.Observation)
					if w.code != "" {
						require.Equal(t, w.code, got.Observation.Code, name)
					}
					require.Equal(t, w.effects, p.count(e.standins)-before, "%s: effects at the provider", name)
					require.Empty(t, p.faults(e.standins).Rules(), "%s: the fault was used", name)
					if got.State == mt.InvocationSucceeded {
						require.NotNil(t, got.Observation.Receipt, name)
						require.NotEmpty(t, got.Observation.Receipt.ID, name)
					} else {
						require.Nil(t, got.Observation.Receipt, "%s: no receipt without success", name)
						require.NotContains(t, strings.ToLower(got.Observation.Wording), "i've sent", name)
					}
				}
			}
		})
	}
}

// invokeToEnd invokes and waits for the invocation's final state.
func (e *env) invokeToEnd(tool, key, args string) apiclient.Response {
	e.t.Helper()
	resp, err := e.invoke(tool, key, args)
	require.NoError(e.t, err)
	if resp.Pending {
		resp, err = e.agent.Wait(e.ctx, resp.InvocationID)
		require.NoError(e.t, err)
	}
	return resp
}

// TestTwilio500AfterTheEffectSendsOneText is the regression the
// classification exists for: Twilio queued the text and answered 500.
// Resending would text the caller twice; the search finds the text and
// adopts it.
func TestTwilio500AfterTheEffectSendsOneText(t *testing.T) {
	t.Parallel()
	e := setup(t)
	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusInternalServerError, Phase: fault.AfterEffect}))

	resp := e.invokeToEnd("send_sms", e.key("sms"), smsArgs)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "one text, not two")
	require.Equal(t, e.standins.Twilio.Messages()[0].SID, resp.Observation.Receipt.ID)
	require.Equal(t, []string{"adopted"}, e.reconciliationKinds(e.key("sms")))
}

func TestSES500AfterTheEffectIsHeldNeverResent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	require.NoError(t, e.standins.SES.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusInternalServerError, Phase: fault.AfterEffect}))

	resp := e.invokeToEnd("email_property_manager", e.key("mail"), emailArgs)
	require.Equal(t, mt.InvocationNeedsReconciliation, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, e.standins.SES.CountEmails(), "one email, not two")
	require.Contains(t, e.requireHeld(e.key("mail")).Reason, "cannot be searched")
}

// TestTwilioReconciliationMatchesABodyTwilioRewrote: on a trial account
// with Smart Encoding, Twilio stores another body than the one sent; the
// lost answer's text is still found by recipient, sender and window, and
// the log says why it was adopted.
func TestTwilioReconciliationMatchesABodyTwilioRewrote(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *options) {
		o.standins.Twilio.TrialAccount, o.standins.Twilio.SmartEncoding = true, true
	})
	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusBadGateway, Phase: fault.AfterEffect}))

	resp := e.invokeToEnd("send_sms", e.key("sms"), `{"to":"+14155550100","body":"Your technician\u2019s on the way \u2014 arriving at 9."}`)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
	msg := e.standins.Twilio.Messages()[0]
	require.Equal(t, "Sent from your Twilio trial account - Your technician's on the way - arriving at 9.", msg.Body)
	require.Equal(t, msg.SID, resp.Observation.Receipt.ID)

	r, err := e.ops.Reconciliation(e.ctx, e.key("sms"))
	require.NoError(t, err)
	require.Len(t, r.Events, 1)
	why := r.Events[0].Reason
	require.Equal(t, "adopted", r.Events[0].Kind)
	require.Contains(t, why, "HTTP 502", "what made the outcome unknown")
	require.Contains(t, why, "recipient +14155550100 and sender "+standin.TwilioFrom+" match")
	require.Contains(t, why, "stored body contains ours once normalised")
	require.Contains(t, why, "Twilio keeps no operation key")
}

// TestTwoKeysNeverAdoptOneText: two keys whose lost answers match the same
// text search at the same moment, both find it unclaimed, and both try to
// adopt it. The ledger's unique receipt index lets one settle; the other
// is held for a human, and nothing is sent.
func TestTwoKeysNeverAdoptOneText(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.claimAbandoned(e.key("first"), "send_sms", smsArgs)
	e.claimAbandoned(e.key("second"), "send_sms", smsArgs)
	sid := e.sendDirect("Your technician arrives at 9.")
	// Both searches are held until both are under way.
	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Hang, Method: http.MethodGet, Times: 2}))

	results := make(chan apiclient.Response, 2)
	for _, name := range []string{"first", "second"} {
		go func() { results <- e.invokeToEnd("send_sms", e.key(name), smsArgs) }()
	}
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, e.standins.Twilio.Faults().WaitHeld(ctx, 2))
	e.standins.Twilio.Faults().Release()

	// Whoever settles first adopts the text. The other key either lost the
	// race inside the settling transaction (the unique index refused it:
	// held for a human), or searched after the first had settled, found
	// the text credited elsewhere and, its own dead attempt having left no
	// trace, sent its own. Never do two keys hold one text.
	var adopted, other []apiclient.Response
	for range 2 {
		r := <-results
		if r.State == mt.InvocationSucceeded && r.Observation.Receipt != nil && r.Observation.Receipt.ID == sid {
			adopted = append(adopted, r)
		} else {
			other = append(other, r)
		}
	}
	require.Len(t, adopted, 1, "exactly one key adopts the text: %+v %+v", adopted, other)
	switch r := other[0]; r.State {
	case mt.InvocationNeedsReconciliation:
		require.Contains(t, r.Observation.NextActions.RootCause, "belongs to another operation key")
		require.Equal(t, 1, e.standins.Twilio.CountMessages(), "nothing was sent")
	case mt.InvocationSucceeded:
		require.NotEqual(t, sid, r.Observation.Receipt.ID)
		require.Equal(t, 2, e.standins.Twilio.CountMessages(), "one text of its own, sent once")
	default:
		t.Fatalf("the other key ended %s: %+v", r.State, r.Observation)
	}
}

// TestMoneyWithAnUnknownAnswerIsHeldInEitherPhase: a refund whose answer
// proves nothing is never replayed, even under its Idempotency-Key; a
// human decides, whether or not the money moved.
func TestMoneyWithAnUnknownAnswerIsHeldInEitherPhase(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for i, tc := range []struct {
		rule    fault.Rule
		refunds int
	}{
		{fault.Rule{Action: fault.Fail, Status: http.StatusInternalServerError, Phase: fault.AfterEffect}, 1},
		{fault.Rule{Action: fault.Fail, Status: http.StatusTooManyRequests, Phase: fault.BeforeEffect}, 0},
		{fault.Rule{Action: fault.Fail, Status: http.StatusTooManyRequests, Phase: fault.AfterEffect}, 1},
		{fault.Rule{Action: fault.Fail, Status: http.StatusServiceUnavailable, Phase: fault.BeforeEffect}, 0},
	} {
		name := fmt.Sprintf("refund-%d", i)
		tc.rule.Method, tc.rule.Path = http.MethodPost, "/v1/refunds"
		require.NoError(t, e.standins.Sandbox.Faults().Add(tc.rule))
		before := e.standins.Sandbox.CountRefunds()
		pending := e.requestRefund(name)
		_, err := e.ops.Approve(e.ctx, pending.ApprovalID, "duplicate confirmed")
		require.NoError(t, err)

		done, err := e.agent.Wait(e.ctx, pending.InvocationID)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationNeedsReconciliation, done.State, "%s: %+v", name, done.Observation)
		require.Equal(t, tc.refunds, e.standins.Sandbox.CountRefunds()-before, name)
		require.Contains(t, e.requireHeld(e.key(name)).Reason, "money", name)
	}
	require.Zero(t, e.standins.Sandbox.IdempotentReplays(), "money is never replayed")
}

// TestTwilioFailedStatusIsAFailureWhateverElseTheAnswerHolds: Twilio
// answers 201 with a SID for a text to a handset it cannot reach, but the
// status is failed: the agent is told it did not go through, with
// Twilio's own cause, and nothing is resent. A record found by a search
// after a lost answer is judged the same way.
func TestTwilioFailedStatusIsAFailureWhateverElseTheAnswerHolds(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *options) { o.standins.Twilio.Unreachable = []string{"+14155550100"} })

	resp := e.invokeToEnd("send_sms", e.key("sms"), smsArgs)
	require.Equal(t, mt.InvocationFailed, resp.State, "%+v", resp.Observation)
	require.Equal(t, mt.CodeNotDelivered, resp.Observation.Code)
	require.Nil(t, resp.Observation.Receipt, "a failed message proves no success")
	require.Contains(t, resp.Observation.NextActions.RootCause, "30003")
	require.Contains(t, resp.Observation.NextActions.RootCause, "Unreachable destination handset")
	require.NotContains(t, strings.ToLower(resp.Observation.Wording), "i've sent")
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "not resent")

	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusInternalServerError, Phase: fault.AfterEffect}))
	lost := e.invokeToEnd("send_sms", e.key("sms-lost"), `{"to":"+14155550100","body":"Another text."}`)
	require.Equal(t, mt.InvocationFailed, lost.State, "%+v", lost.Observation)
	require.Equal(t, mt.CodeNotDelivered, lost.Observation.Code)
	require.Contains(t, lost.Observation.NextActions.RootCause, "status failed")
	require.Equal(t, []string{"adopted"}, e.reconciliationKinds(e.key("sms-lost")), "found, and taken for what it is")
	require.Equal(t, 2, e.standins.Twilio.CountMessages(), "one record per key, never resent")
}
