package maestrotype_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
)

func TestMessageStatusOnlyMovesForward(t *testing.T) {
	t.Parallel()
	cases := []struct {
		next, cur mt.MessageStatus
		want      bool
	}{
		{mt.MessageQueued, "", true},
		{mt.MessageDelivered, "", true},
		{mt.MessageSending, mt.MessageQueued, true},
		{mt.MessageSent, mt.MessageAccepted, true},
		{mt.MessageDelivered, mt.MessageSent, true},
		{mt.MessageUndelivered, mt.MessageSent, true},
		{mt.MessageFailed, mt.MessageQueued, true},
		{mt.MessageRead, mt.MessageDelivered, true},
		{mt.MessageQueued, mt.MessageAccepted, false},
		{mt.MessageSent, mt.MessageSent, false},
		{mt.MessageSent, mt.MessageDelivered, false},
		{mt.MessageDelivered, mt.MessageUndelivered, false},
		{mt.MessageUndelivered, mt.MessageDelivered, false},
		{mt.MessageRead, mt.MessageFailed, false},
		{mt.MessageDelivered, mt.MessageRead, false},
		{"teleported", "", false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, tc.next.Supersedes(tc.cur), "%s after %s", tc.next, tc.cur)
	}
	require.True(t, mt.MessageUndelivered.Failed())
	require.True(t, mt.MessageCanceled.Final())
	require.False(t, mt.MessageSent.Final())
	require.True(t, mt.MessageRead.Delivered())
	require.False(t, mt.MessageRead.Failed())
}
