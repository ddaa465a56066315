package connectors_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
)

func setup(t *testing.T) (*standin.Set, connectors.Set) {
	t.Helper()
	return setupWith(t, standin.Options{})
}

func setupWith(t *testing.T, opts standin.Options) (*standin.Set, connectors.Set) {
	t.Helper()
	s, err := standin.StartWith(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	tw, ses := s.TwilioConfig(), s.SESConfig()
	tw.Timeout, ses.Timeout = 300*time.Millisecond, 300*time.Millisecond
	set, err := connectors.NewSet(tw, ses, connectors.HTTPConfig{Services: s.HTTPServices(), Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	return s, set
}

var (
	smsCall   = connectors.Call{Kind: mt.KindTwilioSMS, IdempotencyKey: "k1", Settings: map[string]string{"to": "+14155550100", "body": "hi"}}
	emailCall = connectors.Call{Kind: mt.KindSESEmail, IdempotencyKey: "k2", Settings: map[string]string{"to": "pm@example.com", "subject": "s", "body": "b"}}
	woCall    = connectors.Call{Kind: mt.KindHTTP, IdempotencyKey: "k3",
		Settings: map[string]string{"service": "sandbox", "method": "POST", "path": "/v1/work_orders"},
		Body:     json.RawMessage(`{"tenant_id":"t_100","category":"hvac","description":"No heat","priority":"urgent"}`)}
)

// TestFailuresAreClassifiedByWhatTheySayAboutTheEffect: only a failure that
// proves nothing happened may be retried; every answer that proves nothing
// is unknown, in either phase, and a failure status is a failure.
func TestFailuresAreClassifiedByWhatTheySayAboutTheEffect(t *testing.T) {
	t.Parallel()
	rule := func(r fault.Rule) func(*fault.Injector) error {
		return func(i *fault.Injector) error { return i.Add(r) }
	}
	fail := func(status int, phase fault.Phase) func(*fault.Injector) error {
		return rule(fault.Rule{Action: fault.Fail, Status: status, Phase: phase})
	}
	tests := []struct {
		name   string
		call   connectors.Call
		inject func(*fault.Injector) error
		want   connectors.Class
	}{
		{"twilio 400", smsCall, fail(http.StatusBadRequest, fault.BeforeEffect), connectors.ClassRejected},
		{"twilio 401", smsCall, fail(http.StatusUnauthorized, fault.BeforeEffect), connectors.ClassAuth},
		{"twilio 429", smsCall, fail(http.StatusTooManyRequests, fault.BeforeEffect), connectors.ClassUnknown},
		{"twilio 500 after the effect", smsCall, fail(http.StatusInternalServerError, fault.AfterEffect), connectors.ClassUnknown},
		{"twilio 503", smsCall, fail(http.StatusServiceUnavailable, fault.BeforeEffect), connectors.ClassUnknown},
		{"twilio lost answer", smsCall, rule(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect}), connectors.ClassUnknown},
		{"twilio reset", smsCall, rule(fault.Rule{Action: fault.Reset, Phase: fault.AfterEffect}), connectors.ClassUnknown},
		{"twilio 2xx without a SID", smsCall, rule(fault.Rule{Action: fault.Respond, Status: 201, Body: `{"status":"queued"}`}), connectors.ClassUnknown},
		{"twilio unparsable 2xx", smsCall, rule(fault.Rule{Action: fault.Respond, Status: 201, Body: `<html>`}), connectors.ClassUnknown},
		{"twilio failed status", smsCall, rule(fault.Rule{Action: fault.Respond, Status: 201,
			Body: `{"sid":"SM0123","status":"failed","error_code":30003,"error_message":"Unreachable destination handset"}`}), connectors.ClassFailed},
		{"twilio undelivered status", smsCall, rule(fault.Rule{Action: fault.Respond, Status: 201, Body: `{"sid":"SM0123","status":"undelivered"}`}), connectors.ClassFailed},
		{"twilio canceled status", smsCall, rule(fault.Rule{Action: fault.Respond, Status: 201, Body: `{"sid":"SM0123","status":"canceled"}`}), connectors.ClassFailed},
		{"ses 500", emailCall, fail(http.StatusInternalServerError, fault.BeforeEffect), connectors.ClassUnknown},
		{"ses 429 after the effect", emailCall, fail(http.StatusTooManyRequests, fault.AfterEffect), connectors.ClassUnknown},
		{"ses 403", emailCall, fail(http.StatusForbidden, fault.BeforeEffect), connectors.ClassAuth},
		{"ses 400", emailCall, fail(http.StatusBadRequest, fault.BeforeEffect), connectors.ClassRejected},
		{"ses lost answer", emailCall, rule(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect}), connectors.ClassUnknown},
		{"ses 2xx without a message ID", emailCall, rule(fault.Rule{Action: fault.Respond, Status: 200, Body: `{}`}), connectors.ClassUnknown},
		{"http 422", woCall, fail(http.StatusUnprocessableEntity, fault.BeforeEffect), connectors.ClassRejected},
		{"http 429", woCall, fail(http.StatusTooManyRequests, fault.BeforeEffect), connectors.ClassUnknown},
		{"http 502 after the effect", woCall, fail(http.StatusBadGateway, fault.AfterEffect), connectors.ClassUnknown},
		{"http reset", woCall, rule(fault.Rule{Action: fault.Reset, Phase: fault.AfterEffect}), connectors.ClassUnknown},
		{"http 2xx without an id", woCall, rule(fault.Rule{Action: fault.Respond, Status: 201, Body: `{"status":"open"}`}), connectors.ClassUnknown},
		{"http failed status", woCall, rule(fault.Rule{Action: fault.Respond, Status: 200, Body: `{"id":"wo_1","status":"failed","failure_reason":"technician pool closed"}`}), connectors.ClassFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, set := setup(t)
			inj := map[mt.ConnectorKind]*fault.Injector{
				mt.KindTwilioSMS: s.Twilio.Faults(), mt.KindSESEmail: s.SES.Faults(), mt.KindHTTP: s.Sandbox.Faults(),
			}[tt.call.Kind]
			require.NoError(t, tt.inject(inj))
			_, err := set.Do(t.Context(), tt.call)
			require.Error(t, err)
			ce := connectors.AsError(err)
			require.Equal(t, tt.want, ce.Class, ce.Error())
			require.False(t, ce.Retryable(), "only an unreachable provider is retried as is")
		})
	}
}

func TestFailureStatusesArePerProvider(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"failed", "undelivered", "canceled"} {
		require.Equal(t, connectors.StatusFailed, connectors.TwilioStatusMeaning(s), s)
	}
	for _, s := range []string{"queued", "accepted", "sending", "sent", "delivered", "scheduled", ""} {
		require.Equal(t, connectors.StatusAccepted, connectors.TwilioStatusMeaning(s), s)
	}
	require.Equal(t, connectors.StatusFailed, connectors.HTTPStatusMeaning("failed"))
	require.Equal(t, connectors.StatusAccepted, connectors.HTTPStatusMeaning("cancelled"), "the success of a cancel")
	require.Equal(t, connectors.StatusAccepted, connectors.HTTPStatusMeaning("canceled"))
	require.Equal(t, connectors.StatusFailed, connectors.ReceiptStatusMeaning(&mt.Receipt{Provider: "twilio", Status: "undelivered"}))
	require.Equal(t, connectors.StatusFailed, connectors.ReceiptStatusMeaning(&mt.Receipt{Provider: "http:billing", Status: "failed"}))
	require.Equal(t, connectors.StatusAccepted, connectors.ReceiptStatusMeaning(&mt.Receipt{Provider: "ses", Status: "failed"}), "SES receipts carry no status of SES's")
	require.Equal(t, connectors.StatusAccepted, connectors.ReceiptStatusMeaning(nil))
}

func TestFailedStatusCarriesTheProvidersCause(t *testing.T) {
	t.Parallel()
	s, set := setup(t)
	require.NoError(t, s.Twilio.Faults().Add(fault.Rule{Action: fault.Respond, Status: 201,
		Body: `{"sid":"SM0123","status":"failed","error_code":30003,"error_message":"Unreachable destination handset"}`}))
	_, err := set.Do(t.Context(), smsCall)
	ce := connectors.AsError(err)
	require.Equal(t, connectors.ClassFailed, ce.Class)
	require.Equal(t, "30003", ce.ProviderCode)
	require.Contains(t, ce.Error(), "Unreachable destination handset")
	require.Contains(t, ce.Error(), "SM0123")
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

// TestOnlyTheCatalogsProvidersNeedCredentials: a catalog that calls only
// an HTTP service starts without a Twilio account or SES credentials; one
// that pages needs both.
func TestOnlyTheCatalogsProvidersNeedCredentials(t *testing.T) {
	t.Parallel()
	none := connectors.HTTPConfig{}
	set, err := connectors.NewSetFor([]mt.ConnectorKind{mt.KindHTTP}, connectors.TwilioConfig{}, connectors.SESConfig{}, none)
	require.NoError(t, err)
	require.Equal(t, []mt.ConnectorKind{mt.KindHTTP}, set.Kinds())

	_, err = connectors.NewSetFor([]mt.ConnectorKind{mt.KindHTTP, mt.KindPage}, connectors.TwilioConfig{}, connectors.SESConfig{}, none)
	require.ErrorContains(t, err, "twilio: account SID and auth token are required")

	s, _ := setup(t)
	set, err = connectors.NewSetFor([]mt.ConnectorKind{mt.KindPage}, s.TwilioConfig(), s.SESConfig(), none)
	require.NoError(t, err)
	require.Equal(t, []mt.ConnectorKind{mt.KindPage, mt.KindSESEmail, mt.KindTwilioSMS}, set.Kinds())
}

// A read that finds nothing is an answer, not a failure: 404, or 2xx with
// nothing in it. Anything else the service holds is found.
func TestHTTPReadThatFindsNothingIsEmpty(t *testing.T) {
	t.Parallel()
	get := func(path string) connectors.Call {
		return connectors.Call{Kind: mt.KindHTTP, Settings: map[string]string{"service": "sandbox", "method": "GET", "path": path}}
	}
	s, set := setup(t)

	res, err := set.Do(t.Context(), get("/v1/tenants/t_999"))
	require.NoError(t, err, "a 404 on a read is not an error")
	require.True(t, res.Empty)
	require.Contains(t, string(res.Payload), "No such tenant")

	res, err = set.Do(t.Context(), get("/v1/tenants/t_100"))
	require.NoError(t, err)
	require.False(t, res.Empty)

	for body, empty := range map[string]bool{
		`null`: true, `[]`: true, `{}`: true, `{"object":"list","data":[]}`: true,
		`[{"id":"t_1"}]`: false, `{"id":"t_1"}`: false, `{"object":"list","data":[{"id":"t_1"}]}`: false, `0`: false,
	} {
		require.NoError(t, s.Sandbox.Faults().Add(fault.Rule{Action: fault.Respond, Status: 200, Body: body}))
		res, err := set.Do(t.Context(), get("/v1/tenants/t_100"))
		require.NoError(t, err, body)
		require.Equal(t, empty, res.Empty, body)
	}

	// A write answered 404 stays a refusal: only a lookup finds nothing.
	require.NoError(t, s.Sandbox.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusNotFound}))
	_, err = set.Do(t.Context(), woCall)
	require.Equal(t, connectors.ClassRejected, connectors.AsError(err).Class)
}

// Failures of maestro's own configuration are told apart from the call's:
// no argument can fix them.
func TestMisconfigurationIsMaestrosNotTheCalls(t *testing.T) {
	t.Parallel()
	s, set := setup(t)
	unknown := woCall
	unknown.Settings = map[string]string{"service": "backoffice", "method": "POST", "path": "/v1/work_orders"}
	_, err := set.Do(t.Context(), unknown)
	ce := connectors.AsError(err)
	require.True(t, ce.Misconfigured(), ce.Error())
	require.Contains(t, ce.Error(), `"backoffice" is not configured`)

	missing := smsCall
	missing.Settings = map[string]string{"to": "+14155550100"}
	_, err = set.Do(t.Context(), missing)
	require.True(t, connectors.AsError(err).Misconfigured())

	_, err = set.Do(t.Context(), connectors.Call{Kind: "fax"})
	require.True(t, connectors.AsError(err).Misconfigured())

	require.NoError(t, s.Sandbox.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusUnauthorized}))
	_, err = set.Do(t.Context(), woCall)
	require.True(t, connectors.AsError(err).Misconfigured(), "a refusal of maestro's credentials")

	require.NoError(t, s.Sandbox.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusUnprocessableEntity}))
	_, err = set.Do(t.Context(), woCall)
	require.False(t, connectors.AsError(err).Misconfigured(), "a refusal of the call's arguments")
}
