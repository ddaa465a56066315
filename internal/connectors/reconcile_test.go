package connectors_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/standin/fault"
	"github.com/maestro-run/maestro/internal/standin/twilio"
	"github.com/maestro-run/maestro/maestrotype"
)

func TestTwilioLookupFindsTheMessageByBody(t *testing.T) {
	t.Parallel()
	_, set := setup(t)
	since := time.Now().Add(-time.Minute)

	empty, err := set.Lookup(t.Context(), smsCall, since)
	require.NoError(t, err)
	require.True(t, empty.Complete)
	require.Empty(t, empty.Matches, "a complete search that proves nothing was sent")

	sent, err := set.Do(t.Context(), smsCall)
	require.NoError(t, err)
	other := smsCall
	other.Settings = map[string]string{"to": "+14155550100", "body": "another text"}
	_, err = set.Do(t.Context(), other)
	require.NoError(t, err)

	found, err := set.Lookup(t.Context(), smsCall, since)
	require.NoError(t, err)
	require.True(t, found.Complete)
	require.Len(t, found.Matches, 1, "only the same body matches")
	require.Equal(t, sent.Receipt.ID, found.Matches[0].Receipt.ID)
	require.Equal(t, sent.Receipt.ID, found.Matches[0].Receipt.Fields["message_sid"])

	later, err := set.Lookup(t.Context(), smsCall, time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.True(t, later.Complete)
	require.Empty(t, later.Matches, "messages from before the window are not this call's")
}

func TestPageLookupSettlesOnlyWhatTheSMSLegProves(t *testing.T) {
	t.Parallel()
	_, set := setup(t)
	page := connectors.Call{Kind: maestrotype.KindPage, IdempotencyKey: "k4", Settings: map[string]string{
		"sms_to": "+15550100100", "sms_body": "[urgent] No heat", "email_to": "oncall@example.com", "email_subject": "s", "email_body": "b",
	}}
	since := time.Now().Add(-time.Minute)

	none, err := set.Lookup(t.Context(), page, since)
	require.NoError(t, err)
	require.True(t, none.Complete, "no SMS means no email either: the SMS goes first")
	require.Empty(t, none.Matches)

	_, err = set.Do(t.Context(), page)
	require.NoError(t, err)
	_, err = set.Lookup(t.Context(), page, since)
	require.ErrorIs(t, err, connectors.ErrNotSearchable, "the email leg cannot be looked up")
}

func TestUnsearchableProvidersSaySo(t *testing.T) {
	t.Parallel()
	_, set := setup(t)
	for _, call := range []connectors.Call{emailCall, woCall} {
		_, err := set.Lookup(t.Context(), call, time.Now())
		require.ErrorIs(t, err, connectors.ErrNotSearchable, call.Kind)
		require.False(t, set.Searchable(call.Kind))
	}
	require.True(t, set.Searchable(maestrotype.KindTwilioSMS))
	require.True(t, set.Searchable(maestrotype.KindPage))
}

// TestHTTPKeyStillInFlightIsUnknown: a replay that meets the first request
// still running must not be mistaken for a refusal.
func TestHTTPKeyStillInFlightIsUnknown(t *testing.T) {
	t.Parallel()
	s, set := setup(t)
	require.NoError(t, s.Sandbox.Faults().Add(fault.Rule{Action: fault.Hang, Method: http.MethodPost}))
	t.Cleanup(s.Sandbox.Faults().Release)

	_, err := set.Do(t.Context(), woCall)
	require.Equal(t, connectors.ClassUnknown, connectors.AsError(err).Class)
	_, err = set.Do(t.Context(), woCall)
	ce := connectors.AsError(err)
	require.Equal(t, connectors.ClassUnknown, ce.Class, ce.Error())
	require.Equal(t, http.StatusConflict, ce.HTTPStatus)
}

// TestTwilioLookupMatchesBodiesTwilioRewrote: a trial account's prefix and
// Smart Encoding change the stored body; the match still holds, on
// recipient, sender and window, and says why it was made.
func TestTwilioLookupMatchesBodiesTwilioRewrote(t *testing.T) {
	t.Parallel()
	call := smsCall
	call.Settings = map[string]string{"to": "+14155550100", "body": "Your technician\u2019s on the way \u2014 arriving at 9."}
	for _, tc := range []struct {
		name     string
		opts     twilio.Options
		evidence string
	}{
		{"unchanged", twilio.Options{}, "body identical (same SHA-256 digest)"},
		{"smart encoding", twilio.Options{SmartEncoding: true}, "Smart Encoding"},
		{"trial account", twilio.Options{TrialAccount: true}, "stored body contains ours"},
		{"both", twilio.Options{TrialAccount: true, SmartEncoding: true}, "stored body contains ours"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, set := setupWith(t, standin.Options{Twilio: tc.opts})
			since := time.Now().Add(-time.Minute)
			sent, err := set.Do(t.Context(), call)
			require.NoError(t, err)
			other := call
			other.Settings = map[string]string{"to": "+14155550100", "body": "Something else entirely."}
			_, err = set.Do(t.Context(), other)
			require.NoError(t, err)
			require.Equal(t, tc.name == "unchanged", s.Twilio.Messages()[0].Body == call.Settings["body"], "what Twilio stored")

			found, err := set.Lookup(t.Context(), call, since)
			require.NoError(t, err)
			require.True(t, found.Complete)
			require.Len(t, found.Matches, 1)
			m := found.Matches[0]
			require.Equal(t, sent.Receipt.ID, m.Receipt.ID)
			require.Contains(t, m.Evidence, tc.evidence)
			require.Contains(t, m.Evidence, "recipient +14155550100 and sender "+standin.TwilioFrom+" match")
			require.Contains(t, m.Evidence, "Twilio keeps no operation key")
			require.NotContains(t, m.Evidence, "arriving at 9", "the evidence never quotes the body")
		})
	}
}
