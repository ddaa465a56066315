package daemon_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/daemon"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/standin/twilio"
	"github.com/maestro-run/maestro/temporalx/devtemporal"
	"github.com/maestro-run/maestro/tools"
)

// Dev mode verifies status callbacks with the Twilio stand-in's auth token,
// the account it sends from: a callback signed with it moves a real send's
// receipt, and one signed with anything else is refused.
func TestDevModeVerifiesTwilioStatusCallbacks(t *testing.T) {
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	d, err := daemon.Start(t.Context(), daemon.Config{
		Dev:          true,
		HTTPAddr:     "127.0.0.1:0",
		DataDir:      t.TempDir(),
		TemporalPort: port,
		Logger:       slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Stop(t.Context()) })

	agent := apiclient.New(d.URL(), tools.DemoAgentKey, apiclient.Options{})
	sent, err := agent.Invoke(t.Context(), apitype.InvokeRequest{
		SessionID: "s1", Tool: "send_sms", OperationKey: "s1:sms",
		Args:           json.RawMessage(`{"to":"+14155550100","body":"on our way"}`),
		SessionContext: map[string]string{"caller_number": "+14155550100"},
	})
	require.NoError(t, err)
	// The caller's number is only what the agent stated: a manager approves
	// the text.
	require.Equal(t, mt.InvocationAwaitingApproval, sent.State, sent.Observation.Summary)
	ops := apiclient.New(d.URL(), tools.DemoOpsKey, apiclient.Options{})
	_, err = ops.Approve(t.Context(), sent.ApprovalID, "number checked")
	require.NoError(t, err)
	sent, err = agent.Wait(t.Context(), sent.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, sent.State, sent.Observation.Summary)
	sid := sent.Observation.Receipt.Fields["message_sid"]

	target := d.URL() + "/v1/webhooks/twilio/status"
	form := url.Values{"AccountSid": {twilio.DefaultAccountSID}, "MessageSid": {sid}, "MessageStatus": {"delivered"}}
	post := func(token string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, target, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Twilio-Signature", twilio.Signature(token, target, form))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	status := func() string {
		effs, err := d.Store().EffectListByReceiptID(t.Context(), sid)
		require.NoError(t, err)
		require.Len(t, effs, 1)
		return effs[0].Receipt.Status
	}

	before := status()
	require.Equal(t, http.StatusForbidden, post("forgedtoken"))
	require.Equal(t, before, status(), "a forged callback moved the receipt")

	require.Equal(t, http.StatusNoContent, post(d.Standins().Twilio.AuthToken()))
	require.Equal(t, "delivered", status())
}
