package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// A signed request maestro cannot read is refused at the door as the core
// API refuses one, on every platform's tool route and event route: 400 for
// a body that is not one JSON object, 415 for a body not declared JSON,
// each a JSON refusal the platform logs. Nothing runs and nothing is kept,
// and the signature is not used up: the same request sent as JSON then
// runs, once.
func TestPlatformRoutesRefuseWhatTheyCannotRead(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			w := &startWatch{}
			e := setup(t, withPlatforms(roomyBudget), withStartWatch(w))
			secret, at := platformEnv[d.env], time.Now()
			withType := func(req *http.Request, contentType string) *http.Request {
				req.Header.Del("Content-Type")
				if contentType != "" {
					req.Header.Set("Content-Type", contentType)
				}
				return req
			}
			// Each route's request that would run, as the platform sends it.
			sound := map[bool]func() *http.Request{
				false: func() *http.Request { return d.tool(e, secret, at, e.session, "call_1", "send_sms", smsToCaller) },
				true:  func() *http.Request { return d.end(e, secret, at, e.session) },
			}
			for _, event := range []bool{false, true} {
				for name, tc := range map[string]struct {
					req    *http.Request
					status int
					code   mt.Code
					cause  string
				}{
					"malformed JSON":  {d.raw(e, secret, at, event, []byte(`{"message":`)), http.StatusBadRequest, mt.CodeInvalidRequest, "malformed JSON"},
					"empty body":      {d.raw(e, secret, at, event, nil), http.StatusBadRequest, mt.CodeInvalidRequest, "the request body is empty"},
					"not an object":   {d.raw(e, secret, at, event, []byte(`["send_sms"]`)), http.StatusBadRequest, mt.CodeInvalidRequest, "malformed JSON"},
					"two objects":     {d.raw(e, secret, at, event, []byte(`{} {}`)), http.StatusBadRequest, mt.CodeInvalidRequest, "unexpected data after the JSON object"},
					"text/plain":      {withType(sound[event](), "text/plain"), http.StatusUnsupportedMediaType, mt.CodeUnsupportedMedia, "Content-Type must be application/json"},
					"no Content-Type": {withType(sound[event](), ""), http.StatusUnsupportedMediaType, mt.CodeUnsupportedMedia, "Content-Type must be application/json"},
				} {
					status, body := send(t, tc.req)
					require.Equal(t, tc.status, status, "event %t, %s: %s", event, name, body)
					var got refusalBody
					require.NoError(t, json.Unmarshal(body, &got), "event %t, %s: a JSON refusal: %s", event, name, body)
					require.Equal(t, tc.code, got.Observation.Code, "event %t, %s", event, name)
					require.Equal(t, mt.StatusError, got.Observation.Status, "event %t, %s", event, name)
					require.NotNil(t, got.Observation.NextActions, "event %t, %s", event, name)
					require.Contains(t, got.Observation.NextActions.RootCause, tc.cause, "event %t, %s", event, name)
				}
			}
			e.requireNoTrace(t, w, e.session)
			require.Zero(t, e.standins.Twilio.CountMessages(), "no text went out")

			status, body := send(t, withType(sound[false](), "application/json; charset=utf-8"))
			require.Equal(t, http.StatusOK, status, "%s", body)
			got := d.read(t, body)
			require.False(t, got.err, got.text)
			require.Contains(t, got.text, "I've sent the text")
			require.Equal(t, 1, e.standins.Twilio.CountMessages())
		})
	}
}

// What the model is to hear stays a 200 tool answer in the platform's
// format: a tool the agent may not call, arguments the tool's schema
// refuses, and arguments that are not JSON. None runs.
func TestPlatformToolRefusalsStayToolAnswers(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withPlatforms(roomyBudget))
			got := d.call(t, e, time.Now(), "call_1", "issue_refund", `{"tenant_id":"t_100","amount_cents":12500}`)
			require.True(t, got.err, got.text)
			require.Contains(t, got.text, `tool "issue_refund" is not available to this agent`)

			got = d.call(t, e, time.Now(), "call_2", "send_sms", `{"to":"not a number","body":"Booked."}`)
			require.True(t, got.err, got.text)
			if d.name != "elevenlabs" { // whose arguments are the body itself
				got = d.call(t, e, time.Now(), "call_3", "send_sms", `"{\"to\":"`)
				require.True(t, got.err, got.text)
				require.Contains(t, got.text, "error reading arguments")
			}
			require.Zero(t, e.standins.Twilio.CountMessages(), "nothing refused ran")
		})
	}
}

// refusalBody is the envelope of an HTTP refusal.
type refusalBody struct {
	Observation mt.Observation `json:"observation"`
}
