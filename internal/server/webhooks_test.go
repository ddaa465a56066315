package server_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin/twilio"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Dev mode gives Twilio the API's own address as the status callback and
// verifies callbacks with the stand-in's auth token, the account it sends
// from: the stand-in's own signed callbacks reach the message status
// store, and one signed with anything else is refused.
func TestDevModeFollowsTwilioDelivery(t *testing.T) {
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	d, err := server.Start(t.Context(), server.Config{
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

	msg, ok := d.Standins().Twilio.Message(sid)
	require.True(t, ok)
	require.Equal(t, d.URL()+"/v1/webhooks/twilio/status", msg.StatusCallback)
	require.Eventually(t, func() bool {
		got, err := agent.Invocation(t.Context(), sent.InvocationID)
		return err == nil && got.Delivery != nil && got.Delivery.Status == mt.MessageDelivered
	}, 10*time.Second, 20*time.Millisecond, "the stand-in's callbacks never reached the invocation")

	target := d.URL() + "/v1/webhooks/twilio/status"
	form := url.Values{"AccountSid": {twilio.DefaultAccountSID}, "MessageSid": {sid}, "MessageStatus": {"read"}}
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
	status := func() mt.MessageStatus {
		ms, err := d.Store().MessageStatusGet(t.Context(), "twilio", sid)
		require.NoError(t, err)
		return ms.Status
	}

	require.Equal(t, http.StatusForbidden, post("forgedtoken"))
	require.Equal(t, mt.MessageDelivered, status(), "a forged callback moved the status")

	require.Equal(t, http.StatusOK, post(d.Standins().Twilio.AuthToken()))
	require.Equal(t, mt.MessageRead, status())
}
