package twilio_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
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
