package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// holdMessage takes a message under key in a session of its own, ends the
// call with every channel refusing, and waits until the message is held
// for a human; it answers the held key.
func (e *env) holdMessage(session, key, words string) string {
	e.t.Helper()
	req := invokeRequest(session, "take_message", key, `{"message":"`+words+`"}`)
	req.SessionContext = sessionFacts
	_, err := e.agent.Invoke(e.ctx, req)
	require.NoError(e.t, err)
	_, err = e.agent.End(e.ctx, session, apitype.EndRequest{})
	require.NoError(e.t, err)
	var sess apitype.Session
	require.Eventually(e.t, func() bool {
		sess, err = e.agent.Session(e.ctx, session)
		return err == nil && len(sess.PostCall) == 1 && sess.PostCall[0].Status == "held"
	}, 3*time.Minute, 50*time.Millisecond, "held: %+v (%v)", sess.PostCall, err)
	return workflows.PostCallHeldKey(session, sess.PostCall[0].Key)
}

// Post-call work no channel delivered is listed in the console with what
// the caller said, opens from the list and from its session, and an
// operator retries it along its chain or settles it by hand there; the API
// then reports what the console did.
func TestConsoleBrowserActsOnHeldPostCallWork(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx, cancel := context.WithTimeout(browser(t), 4*time.Minute)
	defer cancel()
	e.standins.SES.Faults().FailNext(50, http.StatusBadRequest)
	e.standins.Twilio.Faults().FailNext(50, http.StatusBadRequest)
	retryKey := e.holdMessage(e.session+"-retry", e.key("retry"), "Please renew my parking permit.")
	settleSession := e.session + "-settle"
	settleKey := e.holdMessage(settleSession, e.key("settle"), "The boiler in flat 4 is leaking.")
	e.standins.SES.Faults().Reset()
	e.standins.Twilio.Faults().Reset()

	browserSignIn(t, ctx, e.url, tools.DemoOpsKey, "")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/console/reconciliations"),
		chromedp.WaitVisible(chromedp.CSS("ol.queue")),
	))
	list := text(t, ctx, "ol.queue")
	require.Contains(t, list, "The caller said: “Please renew my parking permit.”")
	require.Contains(t, list, "The caller said: “The boiler in flat 4 is leaking.”")
	shoot(t, ctx, "held-list")

	// Retry along its chain, opened from the list.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//li[contains(., "parking permit")]//h2/a`),
		chromedp.WaitVisible(chromedp.CSS("#act")),
	))
	require.Contains(t, text(t, ctx, "section[aria-labelledby=known]"), "key "+retryKey)
	shoot(t, ctx, "held")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[normalize-space()="Retry along its chain"]`),
		chromedp.WaitVisible(chromedp.CSS("p.notice")),
	))
	require.Contains(t, text(t, ctx, "p.notice"), "Retried along its chain")
	rec, err := e.ops.Reconciliation(e.ctx, retryKey)
	require.NoError(t, err)
	require.NotEqual(t, "held", rec.Status, "the API reports the retry")
	require.Eventually(t, func() bool {
		rec, err = e.ops.Reconciliation(e.ctx, retryKey)
		return err == nil && rec.Status == "delivered"
	}, 3*time.Minute, 50*time.Millisecond, "the retry delivers: %+v (%v)", rec, err)
	require.Equal(t, "ses", rec.Receipt.Provider)
	require.Equal(t, 1, e.standins.SES.CountEmails(), "delivered once")
	shoot(t, ctx, "held-retried")

	// Settle by hand, opened from its session.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/console/sessions/"+settleSession),
		chromedp.WaitVisible(chromedp.CSS("#postcall")),
		chromedp.Click(`//a[normalize-space()="Act on it"]`),
		chromedp.WaitVisible(chromedp.CSS("#settle-reason")),
	))
	require.Contains(t, text(t, ctx, "section[aria-labelledby=known]"), "key "+settleKey)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[name=outcome][value=delivered]`)),
		chromedp.SendKeys(chromedp.CSS("#settle-reason"), "phoned the caller; the plumber is on the way"),
	))
	shoot(t, ctx, "held-settle")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[normalize-space()="Settle"]`),
		chromedp.WaitVisible(chromedp.CSS("p.notice")),
	))
	require.Contains(t, text(t, ctx, "p.notice"), "Settled")
	rec, err = e.ops.Reconciliation(e.ctx, settleKey)
	require.NoError(t, err)
	require.Equal(t, "delivered", rec.Status, "the API reports the settlement")
	require.Equal(t, "human-attested", rec.Receipt.Provider)
	require.Equal(t, 1, e.standins.SES.CountEmails()+e.standins.Twilio.CountMessages(), "nothing was sent for the settled work")
	shoot(t, ctx, "held-settled")
}
