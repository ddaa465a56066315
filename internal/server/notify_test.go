package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/callback"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

const (
	managerPhone  = "+15005550101"
	managerEmail  = "manager@example.com"
	webhookSecret = "hook-signing-secret"
)

// hookReceiver is a webhook channel's receiver: it keeps each post whose
// signature verifies and refuses the rest.
type hookReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	posts []map[string]any
	bad   int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := callback.Verify([]byte(webhookSecret), r.Header.Get(callback.SignatureHeader), body, time.Now(), time.Minute); err != nil {
			h.bad++
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var post map[string]any
		if json.Unmarshal(body, &post) != nil {
			http.Error(w, "not json", http.StatusBadRequest)
			return
		}
		post["idempotency_key"] = r.Header.Get("Idempotency-Key")
		h.posts = append(h.posts, post)
		w.Header().Set("X-Request-Id", "hook-"+r.Header.Get("Idempotency-Key"))
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) received() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.posts...)
}

// withNotify gives the demo manager an SMS and an email channel and the
// manager role a signed webhook.
func withNotify(hookURL string) func(*options) {
	return func(o *options) {
		cat := strings.Replace(string(tools.DemoCatalogYAML), "    roles: [manager, ops, admin]\n",
			"    roles: [manager, ops, admin]\n    notify:\n"+
				"      - {channel: sms, to: \""+managerPhone+"\"}\n"+
				"      - {channel: email, to: "+managerEmail+"}\n", 1)
		cat = strings.Replace(cat, "\ntools:\n",
			"\nroles:\n  - name: manager\n    notify:\n"+
				"      - {channel: webhook, to: \""+hookURL+"\", secret_env: NOTIFY_HOOK_SECRET}\n\ntools:\n", 1)
		o.catalog = []byte(cat)
		o.getenv = func(k string) string {
			if k == "NOTIFY_HOOK_SECRET" {
				return webhookSecret
			}
			return ""
		}
	}
}

type notifyEventDetail struct {
	Stage     string      `json:"stage"`
	Recipient string      `json:"recipient"`
	Channel   string      `json:"channel"`
	Receipt   *mt.Receipt `json:"receipt"`
	Error     string      `json:"error"`
}

// notifyEvents waits until the request's log holds want notification
// events (notified and notify_failed) and returns them by recipient.
func (e *env) notifyEvents(approvalID string, want int) map[string]apitype.ApprovalEvent {
	e.t.Helper()
	out := map[string]apitype.ApprovalEvent{}
	require.Eventually(e.t, func() bool {
		a, err := e.ops.Approval(e.ctx, approvalID)
		if err != nil {
			return false
		}
		clear(out)
		for _, ev := range a.Events {
			if ev.Kind == "notified" || ev.Kind == "notify_failed" {
				var d notifyEventDetail
				require.NoError(e.t, json.Unmarshal(ev.Detail, &d))
				out[d.Recipient] = ev
			}
		}
		return len(out) >= want
	}, time.Minute, 50*time.Millisecond)
	return out
}

func detailOf(t *testing.T, ev apitype.ApprovalEvent) notifyEventDetail {
	var d notifyEventDetail
	require.NoError(t, json.Unmarshal(ev.Detail, &d))
	return d
}

func TestGatedRefundTellsTheManagerOncePerChannelWithReceipts(t *testing.T) {
	t.Parallel()
	hook := newHookReceiver(t)
	e := setup(t, withNotify(hook.srv.URL+"/hooks/approvals"))
	pending := e.requestRefund("notified-refund")

	events := e.notifyEvents(pending.ApprovalID, 3)
	require.Len(t, events, 3)

	sms := events["operator:demo-manager:sms:0"]
	require.Equal(t, "notified", sms.Kind)
	var texts []string
	for _, m := range e.standins.Twilio.Messages() {
		if m.To == managerPhone {
			texts = append(texts, m.SID)
		}
	}
	require.Len(t, texts, 1, "one text to the manager")
	d := detailOf(t, sms)
	require.Equal(t, "opened", d.Stage)
	require.Equal(t, texts[0], d.Receipt.ID, "the event carries Twilio's message SID")
	msg, err := e.standins.Reader().TwilioMessage(d.Receipt.ID)
	require.NoError(t, err)
	require.NotEmpty(t, msg.Status)
	text := e.standins.Twilio.Messages()[0].Body
	for _, m := range e.standins.Twilio.Messages() {
		if m.SID == d.Receipt.ID {
			text = m.Body
		}
	}
	require.Contains(t, text, "issue_refund")
	require.Contains(t, text, "amount_cents=2500")
	require.Contains(t, text, "/console/approvals/"+pending.ApprovalID)

	email := detailOf(t, events["operator:demo-manager:email:0"])
	var mails []string
	for _, m := range e.standins.SES.Emails() {
		for _, to := range m.Destination.To {
			if to == managerEmail {
				mails = append(mails, m.MessageID)
			}
		}
	}
	require.Equal(t, []string{email.Receipt.ID}, mails, "one email, its SES message ID in the event")

	posts := hook.received()
	require.Len(t, posts, 1)
	require.Zero(t, hook.bad, "every post is signed")
	require.Equal(t, pending.ApprovalID, posts[0]["approval_id"])
	require.Equal(t, "issue_refund", posts[0]["tool"])
	wh := detailOf(t, events["role:manager:webhook:0"])
	require.Equal(t, "hook-"+posts[0]["idempotency_key"].(string), wh.Receipt.ID)
	require.Equal(t, "200", wh.Receipt.Status)

	// The notifications decided nothing: the request waits for the manager.
	a, err := e.ops.Approve(e.ctx, pending.ApprovalID, "duplicate confirmed")
	require.NoError(t, err)
	require.Equal(t, "approved", a.Status)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
}

func TestFailedChannelIsRecordedAndTheRequestCanStillBeApproved(t *testing.T) {
	t.Parallel()
	hook := newHookReceiver(t)
	e := setup(t, withNotify(hook.srv.URL+"/hooks/approvals"))
	// Twilio refuses the text outright: nothing was sent, and resending
	// the same message cannot help.
	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusBadRequest, Method: http.MethodPost, Times: 10}))
	pending := e.requestRefund("refund-failed-text")

	events := e.notifyEvents(pending.ApprovalID, 3)
	sms := events["operator:demo-manager:sms:0"]
	require.Equal(t, "notify_failed", sms.Kind)
	require.NotEmpty(t, detailOf(t, sms).Error)
	require.Equal(t, "notified", events["operator:demo-manager:email:0"].Kind)
	for _, m := range e.standins.Twilio.Messages() {
		require.NotEqual(t, managerPhone, m.To)
	}

	a, err := e.ops.Approval(e.ctx, pending.ApprovalID)
	require.NoError(t, err)
	require.Equal(t, "pending", a.Status, "a failed notification decides nothing")
	e.standins.Twilio.Faults().Reset()
	a, err = e.ops.Approve(e.ctx, pending.ApprovalID, "duplicate confirmed")
	require.NoError(t, err)
	require.Equal(t, "approved", a.Status)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
}

func TestWebhookSecretMustBeSetToStart(t *testing.T) {
	t.Parallel()
	o := options{}
	withNotify("https://hooks.example.com/x")(&o)
	cat, err := tools.Load(o.catalog)
	require.NoError(t, err)
	require.Equal(t, []string{"NOTIFY_HOOK_SECRET"}, cat.WebhookSecrets())
	require.NoError(t, server.CheckNotifyWebhooks(cat, o.getenv))
	err = server.CheckNotifyWebhooks(cat, func(string) string { return "" })
	require.ErrorContains(t, err, "environment variable NOTIFY_HOOK_SECRET is not set")
}
