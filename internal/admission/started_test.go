package admission

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStartedSessionsForgetsTheOldestBeyondItsBound(t *testing.T) {
	t.Parallel()
	var s startedSessions
	require.False(t, s.has("s-0"))
	for i := range startedSessionsCap + 1 {
		s.add(fmt.Sprintf("s-%d", i))
	}
	s.add("s-1") // already there: no second entry
	require.False(t, s.has("s-0"), "the oldest is forgotten: its next call starts it again and finds it")
	require.True(t, s.has("s-1"))
	require.True(t, s.has(fmt.Sprintf("s-%d", startedSessionsCap)))
	require.Len(t, s.order, startedSessionsCap)
}
