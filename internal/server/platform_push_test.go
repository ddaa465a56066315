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

	"github.com/maestro-run/maestro/internal/callback"
	"github.com/maestro-run/maestro/internal/platform"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// controlURL stands in for a live Vapi call's control URL, keeping every
// control message it is sent.
type controlURL struct {
	mu   sync.Mutex
	msgs []platform.VapiAddMessage
	srv  *httptest.Server
}

func newControlURL(t *testing.T) *controlURL {
	return startControlURL(t, httptest.NewServer)
}

// startControlURL records what a control URL served by start is sent.
func startControlURL(t *testing.T, start func(http.Handler) *httptest.Server) *controlURL {
	c := &controlURL{}
	c.srv = start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		var m platform.VapiAddMessage
		require.NoError(t, json.Unmarshal(body, &m), "%s", body)
		c.mu.Lock()
		c.msgs = append(c.msgs, m)
		c.mu.Unlock()
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *controlURL) received() []platform.VapiAddMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]platform.VapiAddMessage(nil), c.msgs...)
}

// withVapiPush is withPlatforms with the Vapi agent's push_results set as
// given, and a callback relay that sweeps often.
func withVapiPush(budget string, push bool) func(*options) {
	return func(o *options) {
		withPlatforms(budget)(o)
		if push {
			o.catalog = []byte(strings.Replace(string(o.catalog), "      kind: vapi\n", "      kind: vapi\n      push_results: true\n", 1))
		}
		o.callbacks = callback.Config{Interval: 50 * time.Millisecond, FirstBackoff: 100 * time.Millisecond}
	}
}

// A call answered pending within the budget is pushed into the live call
// once its provider answers: one add-message, spoken from the receipt.
// Without push_results, or to a plain-http control URL, nothing is owed.
func TestPlatformVapiPushesALaterResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		push    bool
		control func(ctl *controlURL) string
	}{
		{"on", true, func(ctl *controlURL) string { return ctl.srv.URL + "/control" }},
		{"off", false, func(ctl *controlURL) string { return ctl.srv.URL + "/control" }},
		// Plain http is allowed to a loopback host in dev mode only.
		{"plain http", true, func(*controlURL) string { return "http://control.example.invalid/control" }},
	} {
		push := tc.push && tc.name == "on"
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctl := newControlURL(t)
			e := setup(t, withVapiPush("2s", tc.push))
			// Held well past the budget, and let go once answered, so the
			// answer is pending however loaded the machine is.
			twilio := e.standins.Twilio.Faults()
			twilio.DelayNext(1, 8*time.Second)
			status, body := send(t, vapiToolCalls(e, platformEnv["TEST_VAPI_SECRET"], time.Now(), e.session, "call_1", "send_sms", smsToCaller, tc.control(ctl)))
			twilio.Release()
			require.Equal(t, http.StatusOK, status, "%s", body)
			var res platform.VapiResults
			require.NoError(t, json.Unmarshal(body, &res))
			require.Len(t, res.Results, 1)
			require.Contains(t, res.Results[0].Result, "still working on that")

			var inv mt.InvocationState
			require.Eventually(t, func() bool {
				invs, err := e.store.InvocationListBySession(e.ctx, e.session)
				if err != nil || len(invs) != 1 {
					return false
				}
				inv = invs[0].State
				return inv.Terminal()
			}, time.Minute, 50*time.Millisecond)
			require.Equal(t, mt.InvocationSucceeded, inv)
			invs, err := e.store.InvocationListBySession(e.ctx, e.session)
			require.NoError(t, err)
			obs := invs[0].Observation
			require.NotNil(t, obs.Receipt)

			if !push {
				_, err := e.store.CallbackGet(e.ctx, invs[0].ID)
				require.Error(t, err, "nothing is owed")
				require.Empty(t, ctl.received())
				return
			}
			require.Eventually(t, func() bool {
				cb, err := e.store.CallbackGet(e.ctx, invs[0].ID)
				return err == nil && cb.DeliveredAt != nil
			}, time.Minute, 50*time.Millisecond)
			got := ctl.received()
			require.Len(t, got, 1, "exactly one add-message")
			m := got[0]
			require.Equal(t, "add-message", m.Type)
			require.Equal(t, "system", m.Message.Role)
			require.True(t, m.TriggerResponseEnabled)
			require.Contains(t, m.Message.Content, obs.Wording)
			require.Contains(t, m.Message.Content, "I've sent the text; Twilio reports it "+obs.Receipt.Status)
			require.Equal(t, 1, e.standins.Twilio.CountMessages())
		})
	}
}
