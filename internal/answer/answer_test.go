package answer

import (
	"testing"

	"github.com/stretchr/testify/require"
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
