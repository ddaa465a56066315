package demo

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
)

func TestStatusPhrasesReadAsEnglish(t *testing.T) {
	t.Parallel()
	require.Equal(t, "refund re_1 has succeeded", "refund re_1 "+statusPhrase("succeeded"))
	require.Equal(t, "work order wo_1 is cancelled", "work order wo_1 "+statusPhrase("cancelled"))
	require.Equal(t, `refund re_1 has status "on_hold"`, "refund re_1 "+statusPhrase("on_hold"))

	// Every status the stand-ins report has its own phrase.
	statuses := []string{"open", "pending", "succeeded", "failed", "cancelled", "canceled"}
	for _, s := range []mt.MessageStatus{mt.MessageAccepted, mt.MessageScheduled, mt.MessageQueued, mt.MessageSending,
		mt.MessageSent, mt.MessageDelivered, mt.MessageUndelivered, mt.MessageFailed, mt.MessageCanceled, mt.MessageRead} {
		statuses = append(statuses, string(s))
	}
	for _, s := range statuses {
		require.Contains(t, statusPhrases, s)
	}
	// Events in the past are not states: "is succeeded" is not English.
	for _, s := range []string{"succeeded", "failed", "accepted", "sent", "delivered", "undelivered", "read"} {
		require.NotEqual(t, "is "+s, statusPhrase(s))
	}
}

func TestTimesCountsInEnglish(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0 times", 1: "once", 2: "twice", 3: "3 times"} {
		require.Equal(t, want, times(n), fmt.Sprint(n))
	}
}
