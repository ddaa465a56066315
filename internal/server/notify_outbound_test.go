package server_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// hostileReason is what an agent would write into a refund's reason to
// get a link and a ping into the manager's channels ahead of the real
// "Decide" link.
const hostileReason = "<https://evil.example|Routine, click to approve> <!channel>"

// clientLinks finds what a phone, mail or chat client would make a link
// of: anything with a scheme, and bare domain names.
var clientLinks = regexp.MustCompile(`(?i)[a-z][a-z0-9+.-]*://[^\s<>|]+|\b[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}\b`)

// withHostileNotify is withNotify with the refund's reason among the
// arguments its notifications show.
func withHostileNotify(hookURL string) func(*options) {
	return func(o *options) {
		withNotify(hookURL)(o)
		o.catalog = []byte(strings.Replace(string(o.catalog), "notify_fields: [tenant_id, amount_cents]", "notify_fields: [tenant_id, amount_cents, reason]", 1))
	}
}

// Every channel tells the manager of a refund whose reason is a Slack
// link and an @channel: each shows the words, and maestro's "Decide" link
// is the only link in it.
func TestAgentTextInNotificationsCannotAddALinkOrAPing(t *testing.T) {
	t.Parallel()
	hook := newHookReceiver(t)
	e := setup(t, withHostileNotify(hook.srv.URL+"/hooks/approvals"))
	resp, err := e.invoke("issue_refund", e.key("hostile-refund"),
		`{"tenant_id":"t_100","amount_cents":2500,"reason":"`+strings.ReplaceAll(hostileReason, `"`, `\"`)+`"}`)
	require.NoError(t, err)
	require.True(t, resp.Pending)
	events := e.notifyEvents(resp.ApprovalID, 3)
	for who, ev := range events {
		require.Equal(t, "notified", ev.Kind, who)
	}
	decide := e.url + "/console/approvals/" + resp.ApprovalID
	onlyDecide := func(channel, text string) {
		t.Helper()
		require.Equal(t, []string{decide}, clientLinks.FindAllString(text, -1), "%s: %s", channel, text)
		require.Contains(t, text, "Routine, click to approve", "%s shows the agent's words", channel)
	}

	var sms string
	for _, m := range e.standins.Twilio.Messages() {
		if m.To == managerPhone {
			sms = m.Body
		}
	}
	onlyDecide("sms", sms)

	var mail string
	for _, m := range e.standins.SES.Emails() {
		if len(m.Destination.To) == 1 && m.Destination.To[0] == managerEmail {
			mail = m.Body.Text
			require.Empty(t, m.Body.HTML, "the mail has no HTML part to inject into")
			require.NotContains(t, m.Subject, "\n")
		}
	}
	onlyDecide("email", mail)

	posts := hook.received()
	require.Len(t, posts, 1)
	slack := posts[0]["text"].(string)
	onlyDecide("webhook", slack)
	require.NotContains(t, slack, "<", "no mrkdwn link or mention opens")
	require.Contains(t, slack, "&lt;!channel&gt;")
}

// An approver webhook that answers with a redirect has failed: the post is
// not carried to where the answer points, and the failure is recorded.
func TestNotificationWebhookDoesNotFollowARedirect(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
	}))
	t.Cleanup(target.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/collect", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)

	e := setup(t, withNotify(redirect.URL+"/hooks/approvals"))
	pending := e.requestRefund("redirected-hook")
	events := e.notifyEvents(pending.ApprovalID, 3)
	wh := events["role:manager:webhook:0"]
	require.Equal(t, "notify_failed", wh.Kind)
	require.Contains(t, detailOf(t, wh).Error, "redirects are not followed")
	require.Equal(t, "notified", events["operator:demo-manager:sms:0"].Kind, "the other channels still tell the manager")
	require.Zero(t, elsewhere.Load(), "the signed post never reached the redirect's target")
}
