package connectors_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/connectors"
	"github.com/maestro-run/maestro/standin/fault"
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
	page := connectors.Call{Kind: connectors.KindPage, IdempotencyKey: "k4", Settings: map[string]string{
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
	require.True(t, set.Searchable(connectors.KindTwilioSMS))
	require.True(t, set.Searchable(connectors.KindPage))
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
