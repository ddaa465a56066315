package connectors_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/connectors"
	"github.com/maestro-run/maestro/standin"
	"github.com/maestro-run/maestro/standin/fault"
)

func setup(t *testing.T) (*standin.Set, connectors.Set) {
	t.Helper()
	s, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	tw, ses := s.TwilioConfig(), s.SESConfig()
	tw.Timeout, ses.Timeout = 300*time.Millisecond, 300*time.Millisecond
	set, err := connectors.NewSet(tw, ses, connectors.HTTPConfig{Services: s.HTTPServices(), Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	return s, set
}

var (
	smsCall   = connectors.Call{Kind: connectors.KindTwilioSMS, IdempotencyKey: "k1", Settings: map[string]string{"to": "+14155550100", "body": "hi"}}
	emailCall = connectors.Call{Kind: connectors.KindSESEmail, IdempotencyKey: "k2", Settings: map[string]string{"to": "pm@example.com", "subject": "s", "body": "b"}}
	woCall    = connectors.Call{Kind: connectors.KindHTTP, IdempotencyKey: "k3",
		Settings: map[string]string{"service": "sandbox", "method": "POST", "path": "/v1/work_orders"},
		Body:     json.RawMessage(`{"tenant_id":"t_100","category":"hvac","description":"No heat","priority":"urgent"}`)}
)

// TestFailuresAreClassifiedByWhatTheySayAboutTheEffect: only a failure that
// proves nothing happened may be retried; a lost answer is unknown.
func TestFailuresAreClassifiedByWhatTheySayAboutTheEffect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		call   connectors.Call
		inject func(*standin.Set)
		want   connectors.Class
	}{
		{"twilio 4xx", smsCall, func(s *standin.Set) { s.Twilio.Faults().FailNext(1, http.StatusBadRequest) }, connectors.ClassRejected},
		{"twilio 401", smsCall, func(s *standin.Set) { s.Twilio.Faults().FailNext(1, http.StatusUnauthorized) }, connectors.ClassAuth},
		{"twilio 503", smsCall, func(s *standin.Set) { s.Twilio.Faults().FailNext(1, http.StatusServiceUnavailable) }, connectors.ClassUnavailable},
		{"twilio lost answer", smsCall, func(s *standin.Set) {
			require.NoError(t, s.Twilio.Faults().Add(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect}))
		}, connectors.ClassUnknown},
		{"ses 500", emailCall, func(s *standin.Set) { s.SES.Faults().FailNext(1, http.StatusInternalServerError) }, connectors.ClassUnavailable},
		{"ses 403", emailCall, func(s *standin.Set) { s.SES.Faults().FailNext(1, http.StatusForbidden) }, connectors.ClassAuth},
		{"ses lost answer", emailCall, func(s *standin.Set) {
			require.NoError(t, s.SES.Faults().Add(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect}))
		}, connectors.ClassUnknown},
		{"http 422", woCall, func(s *standin.Set) { s.Sandbox.Faults().FailNext(1, http.StatusUnprocessableEntity) }, connectors.ClassRejected},
		{"http 429", woCall, func(s *standin.Set) { s.Sandbox.Faults().FailNext(1, http.StatusTooManyRequests) }, connectors.ClassUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, set := setup(t)
			tt.inject(s)
			_, err := set.Do(t.Context(), tt.call)
			require.Error(t, err)
			ce := connectors.AsError(err)
			require.Equal(t, tt.want, ce.Class, ce.Error())
			require.Equal(t, tt.want == connectors.ClassUnavailable, ce.Retryable())
		})
	}
}

func TestUnreachableProviderIsSafeToRetry(t *testing.T) {
	t.Parallel()
	tw, err := connectors.NewTwilio(connectors.TwilioConfig{BaseURL: "http://127.0.0.1:1", AccountSID: "AC1", AuthToken: "t", From: "+15550000000"})
	require.NoError(t, err)
	_, err = tw.Do(t.Context(), smsCall)
	ce := connectors.AsError(err)
	require.Equal(t, connectors.ClassUnreachable, ce.Class, ce.Error())
	require.True(t, ce.Retryable())
}

func TestHTTPPassesTheIdempotencyKeyDownstream(t *testing.T) {
	t.Parallel()
	s, set := setup(t)

	first, err := set.Do(t.Context(), woCall)
	require.NoError(t, err)
	again, err := set.Do(t.Context(), woCall)
	require.NoError(t, err)
	require.Equal(t, first.Receipt.ID, again.Receipt.ID, "the provider replayed the first answer")
	require.Equal(t, 1, s.Sandbox.CountWorkOrders())
	require.Equal(t, 1, s.Sandbox.IdempotentReplays())
	require.True(t, woCall.Replayable())
	require.False(t, smsCall.Replayable(), "Twilio takes no idempotency key")
}

func TestReceiptsComeFromTheProvider(t *testing.T) {
	t.Parallel()
	s, set := setup(t)

	sms, err := set.Do(t.Context(), smsCall)
	require.NoError(t, err)
	msg, ok := s.Twilio.Message(sms.Receipt.ID)
	require.True(t, ok)
	require.Equal(t, "+14155550100", msg.To)
	require.Equal(t, sms.Receipt.ID, sms.Receipt.Fields["message_sid"])

	email, err := set.Do(t.Context(), emailCall)
	require.NoError(t, err)
	require.Equal(t, email.Receipt.ID, s.SES.Emails()[0].MessageID)

	_, err = set.Do(t.Context(), connectors.Call{Kind: "fax"})
	require.Equal(t, connectors.ClassInvalid, connectors.AsError(err).Class)
}

func TestTwilioAsksForStatusCallbacksWhenConfigured(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	cfg := s.TwilioConfig()
	cfg.StatusCallback = "http://127.0.0.1:1/v1/webhooks/twilio/status"
	tw, err := connectors.NewTwilio(cfg)
	require.NoError(t, err)
	res, err := tw.Do(t.Context(), smsCall)
	require.NoError(t, err)
	msg, ok := s.Twilio.Message(res.Receipt.ID)
	require.True(t, ok)
	require.Equal(t, cfg.StatusCallback, msg.StatusCallback)

	plain, err := connectors.NewTwilio(s.TwilioConfig())
	require.NoError(t, err)
	res, err = plain.Do(t.Context(), smsCall)
	require.NoError(t, err)
	msg, _ = s.Twilio.Message(res.Receipt.ID)
	require.Empty(t, msg.StatusCallback, "no callback unless configured")
}
