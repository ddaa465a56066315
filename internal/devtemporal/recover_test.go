package devtemporal

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The server reports a port it cannot bind by panicking through its
// logger; Start must answer that with an error a caller can retry on, and
// leave every other panic alone.
func TestRecoverListenTurnsOnlyTheListenerPanicIntoAnError(t *testing.T) {
	t.Parallel()
	err := func() (err error) {
		defer recoverListen(&err)
		panic("Failed to start gRPC listener")
	}()
	require.ErrorIs(t, err, ErrPortTaken)
	require.ErrorContains(t, err, "Failed to start gRPC listener")

	require.PanicsWithValue(t, "something else", func() {
		_ = func() (err error) {
			defer recoverListen(&err)
			panic("something else")
		}()
	})
}
