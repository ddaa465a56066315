package twilio_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	standin "github.com/maestro-run/maestro/internal/standin/twilio"
)

// TestAccountsRewriteStoredBodies: a trial account and Smart Encoding
// change the body Twilio stores and reads back, not the one that was sent.
func TestAccountsRewriteStoredBodies(t *testing.T) {
	t.Parallel()
	const sent = "Your technician\u2019s on the way \u2014 \u201csoon\u201d\u2026"
	const smart = `Your technician's on the way - "soon"...`
	for _, tc := range []struct {
		name string
		opts standin.Options
		want string
	}{
		{"plain", standin.Options{}, sent},
		{"trial", standin.Options{TrialAccount: true}, standin.TrialPrefix + sent},
		{"smart encoding", standin.Options{SmartEncoding: true}, smart},
		{"both", standin.Options{TrialAccount: true, SmartEncoding: true}, standin.TrialPrefix + smart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixtureWith(t, tc.opts)
			m := f.send(t, f.client(t), recipient, sender, sent)
			require.Equal(t, tc.want, *m.Body, "the answer carries the stored body")
			stored, ok := f.standin.Message(*m.Sid)
			require.True(t, ok)
			require.Equal(t, tc.want, stored.Body)
		})
	}
}

// TestUnreachableRecipientsFail: a text to a handset that cannot be
// reached is created failed, with Twilio's error, and stays failed.
func TestUnreachableRecipientsFail(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, standin.Options{Unreachable: []string{recipient}})
	c := f.client(t)
	m := f.send(t, c, recipient, sender, "hello")
	require.Equal(t, standin.StatusFailed, *m.Status)
	require.Equal(t, 30003, *m.ErrorCode)
	require.Equal(t, "Unreachable destination handset", *m.ErrorMessage)

	again, err := c.Api.FetchMessage(*m.Sid, nil)
	require.NoError(t, err)
	require.Equal(t, standin.StatusFailed, *again.Status, "a failed message never advances")

	ok := f.send(t, c, "+14155550199", sender, "hello")
	require.Equal(t, standin.StatusQueued, *ok.Status, "other recipients are reached")
	require.Nil(t, ok.ErrorCode)
}
