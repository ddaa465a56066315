package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/syncbuf"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// newTLSControlURL is newControlURL over https, as a live call's control
// URL is outside dev mode.
func newTLSControlURL(t *testing.T) *controlURL {
	return startControlURL(t, httptest.NewTLSServer)
}

// Outside dev mode a pending call's result is pushed only to a control URL
// on a host the agent's platform block allows. The URL comes in the
// signed body; an https one off the list is never called, nothing is
// owed, and the refusal is logged. On the list, it is pushed to.
func TestVapiPushGoesOnlyToAllowedControlHosts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		controlHosts string
		pushed       bool
	}{
		// Default control_hosts: Vapi's domain, which 127.0.0.1 is not.
		{"off the list", "", false},
		{"on the list", `      control_hosts: ["127.0.0.1"]` + "\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctl := newTLSControlURL(t)
			logs := &syncbuf.Buffer{}
			e := setup(t, withVapiPush("2s", true), func(o *options) {
				o.catalog = []byte(strings.Replace(string(o.catalog), "      push_results: true\n", "      push_results: true\n"+tc.controlHosts, 1))
				o.productionCallbacks = true
				o.callbacks.Client = ctl.srv.Client()
				o.logs = logs
			})
			twilio := e.standins.Twilio.Faults()
			twilio.DelayNext(1, 8*time.Second)
			status, body := send(t, vapiToolCalls(e, platformEnv["TEST_VAPI_SECRET"], time.Now(), e.session, "call_1", "send_sms", smsToCaller, ctl.srv.URL+"/control"))
			twilio.Release()
			require.Equal(t, http.StatusOK, status, "%s", body)
			require.Contains(t, string(body), "still working on that")

			var inv string
			require.Eventually(t, func() bool {
				invs, err := e.store.InvocationListBySession(e.ctx, e.session)
				if err != nil || len(invs) != 1 || !invs[0].State.Terminal() {
					return false
				}
				inv = invs[0].ID
				return invs[0].State == mt.InvocationSucceeded
			}, time.Minute, 50*time.Millisecond)

			if !tc.pushed {
				_, err := e.store.CallbackGet(e.ctx, inv)
				require.Error(t, err, "nothing is owed to a control URL off the list")
				require.Empty(t, ctl.received(), "the control URL is never called")
				require.Contains(t, logs.String(), "control URL host is not on the agent's platform.control_hosts")
				return
			}
			require.Eventually(t, func() bool {
				cb, err := e.store.CallbackGet(e.ctx, inv)
				return err == nil && cb.DeliveredAt != nil
			}, time.Minute, 50*time.Millisecond)
			require.Len(t, ctl.received(), 1, "exactly one add-message")
		})
	}
}
