package twilio_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twilio/twilio-go/client"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"
)

// A message created with StatusCallback is reported sent, then delivered,
// in form posts that twilio-go's own validator accepts: the stand-in signs
// exactly as Twilio does, so a receiver tested against it is tested against
// Twilio's scheme.
func TestStatusCallbacksAreSignedAsTwilioSignsThem(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	validator := client.NewRequestValidator(f.standin.AuthToken())

	var mu sync.Mutex
	var got []url.Values
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		params := map[string]string{}
		for k := range r.PostForm {
			params[k] = r.PostForm.Get(k)
		}
		if !validator.Validate("http://"+r.Host+r.URL.RequestURI(), params, r.Header.Get("X-Twilio-Signature")) {
			http.Error(w, "bad signature", http.StatusForbidden)
			return
		}
		mu.Lock()
		got = append(got, r.PostForm)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)

	m, err := f.client(t).Api.CreateMessage((&openapi.CreateMessageParams{}).
		SetTo(recipient).SetFrom(sender).SetBody("hi").SetStatusCallback(receiver.URL + "/status?tenant=t_100"))
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 2
	}, 5*time.Second, 10*time.Millisecond, "two validated callbacks")
	mu.Lock()
	defer mu.Unlock()
	for i, status := range []string{"sent", "delivered"} {
		require.Equal(t, *m.Sid, got[i].Get("MessageSid"))
		require.Equal(t, status, got[i].Get("MessageStatus"))
		require.Equal(t, recipient, got[i].Get("To"))
	}
}

// A number the carrier cannot reach gets its message accepted like any
// other, then reported sent and undelivered with error 30003, in callbacks
// (each with its own idempotency token) and in reads alike.
func TestUndeliverableNumberEndsUndelivered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	resp, err := http.Post(f.srv.URL+"/_standin/undeliverable", "application/json", strings.NewReader(`{"to":"`+recipient+`"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	resp, err = http.Post(f.srv.URL+"/_standin/undeliverable", "application/json", strings.NewReader(`{"to":"nobody"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	var mu sync.Mutex
	var got []url.Values
	tokens := map[string]bool{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, r.PostForm)
		tokens[r.Header.Get("I-Twilio-Idempotency-Token")] = true
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(receiver.Close)

	m, err := f.client(t).Api.CreateMessage((&openapi.CreateMessageParams{}).
		SetTo(recipient).SetFrom(sender).SetBody("hi").SetStatusCallback(receiver.URL))
	require.NoError(t, err)
	require.Equal(t, "queued", *m.Status, "the provider accepts it like any other")

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 2
	}, 5*time.Second, 10*time.Millisecond)
	mu.Lock()
	require.Equal(t, "sent", got[0].Get("MessageStatus"))
	require.Equal(t, "undelivered", got[1].Get("MessageStatus"))
	require.Equal(t, "30003", got[1].Get("ErrorCode"))
	require.Len(t, tokens, 2, "every callback has its own idempotency token")
	mu.Unlock()

	c := f.client(t)
	var fetched *openapi.ApiV2010Message
	for range 2 {
		fetched, err = c.Api.FetchMessage(*m.Sid, &openapi.FetchMessageParams{})
		require.NoError(t, err)
	}
	require.Equal(t, "undelivered", *fetched.Status)
	require.NotNil(t, fetched.ErrorCode)
	require.Equal(t, 30003, *fetched.ErrorCode)

	other, err := c.Api.CreateMessage((&openapi.CreateMessageParams{}).SetTo("+14155550199").SetFrom(sender).SetBody("hi"))
	require.NoError(t, err)
	for range 2 {
		other, err = c.Api.FetchMessage(*other.Sid, &openapi.FetchMessageParams{})
		require.NoError(t, err)
	}
	require.Equal(t, "delivered", *other.Status, "other numbers are delivered as before")
}

// Paused, the stand-in reports nothing for messages created meanwhile, and
// pausing waits for the reports already under way; resumed, it reports
// again.
func TestPausedStatusCallbacksReportNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var mu sync.Mutex
	got := map[string]int{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		mu.Lock()
		got[r.PostForm.Get("MessageSid")]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	send := func() string {
		m, err := f.client(t).Api.CreateMessage((&openapi.CreateMessageParams{}).
			SetTo(recipient).SetFrom(sender).SetBody("hi").SetStatusCallback(receiver.URL))
		require.NoError(t, err)
		return *m.Sid
	}
	reports := func(sid string) int {
		mu.Lock()
		defer mu.Unlock()
		return got[sid]
	}

	before := send()
	f.standin.PauseStatusCallbacks(true)
	require.Equal(t, 2, reports(before), "pausing waits for the reports under way")
	quiet := send()
	f.standin.PauseStatusCallbacks(false)
	after := send()
	require.Eventually(t, func() bool { return reports(after) == 2 }, 5*time.Second, 10*time.Millisecond)
	require.Zero(t, reports(quiet), "a message created while paused is never reported")
}
