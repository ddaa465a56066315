package answer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestEveryWaiterOfTheInvocationHearsAndNoOtherDoes(t *testing.T) {
	t.Parallel()
	b := New()
	first, stop1 := b.Wait("inv_1")
	defer stop1()
	second, stop2 := b.Wait("inv_1")
	defer stop2()
	other, stop3 := b.Wait("inv_2")
	defer stop3()

	b.Recorded("inv_1")

	require.True(t, closed(first))
	require.True(t, closed(second))
	require.False(t, closed(other))
	require.NotContains(t, b.waiting, "inv_1", "nothing is kept once told")
}

func TestAnOutcomeRecordedBeforeTheWaitIsNotHeard(t *testing.T) {
	t.Parallel()
	b := New()
	b.Recorded("inv_1")
	ch, stop := b.Wait("inv_1")
	defer stop()
	require.False(t, closed(ch), "the waiter reads the ledger for that")
}

func TestAStoppedWaitIsForgotten(t *testing.T) {
	t.Parallel()
	b := New()
	_, stop := b.Wait("inv_1")
	kept, stopKept := b.Wait("inv_1")
	defer stopKept()
	stop()
	require.Len(t, b.waiting["inv_1"], 1)
	stopKept()
	require.Empty(t, b.waiting)
	b.Recorded("inv_1")
	require.False(t, closed(kept), "a forgotten wait is not told")
}

func TestANilBoardTellsNobody(t *testing.T) {
	t.Parallel()
	var b *Board
	ch, stop := b.Wait("inv_1")
	b.Recorded("inv_1")
	stop()
	require.Nil(t, ch, "a nil channel: the waiter falls back to the workflow")
}

func TestWaitingSaysWhoWaits(t *testing.T) {
	t.Parallel()
	b := New()
	require.False(t, b.Waiting("inv_1"))
	_, forget := b.Wait("inv_1")
	require.True(t, b.Waiting("inv_1"))
	forget()
	require.False(t, b.Waiting("inv_1"))
	require.False(t, (*Board)(nil).Waiting("inv_1"))
}

func TestAWaiterHearsTheAnswerUntilItForgetsTheWait(t *testing.T) {
	t.Parallel()
	b := New()
	ch, stop := b.Wait("inv_1")
	plain, stopPlain := b.Wait("inv_2")
	defer stopPlain()
	_, ok := b.Heard(ch)
	require.False(t, ok, "nothing told yet")

	b.Answered("inv_1", Answer{Invocation: ledger.Invocation{ID: "inv_1"}, MessageRead: true})
	b.Recorded("inv_2")

	got, ok := b.Heard(ch)
	require.True(t, ok)
	require.Equal(t, "inv_1", got.Invocation.ID)
	require.True(t, got.MessageRead)
	_, ok = b.Heard(plain)
	require.False(t, ok, "told without an answer: the waiter reads the ledger")
	stop()
	_, ok = b.Heard(ch)
	require.False(t, ok)
	require.Empty(t, b.told, "nothing is kept once forgotten")
}
