package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// getter answers reads from a script, repeating its last answer.
type getter struct {
	reads  int
	states []mt.InvocationState
	errAt  int
}

func (g *getter) InvocationGet(_ context.Context, id string) (ledger.Invocation, error) {
	g.reads++
	if g.reads == g.errAt {
		return ledger.Invocation{}, errors.New("ledger down")
	}
	return ledger.Invocation{ID: id, State: g.states[min(g.reads, len(g.states))-1]}, nil
}

func terminal(inv ledger.Invocation, err error) (bool, error) {
	return err != nil || inv.State.Terminal(), err
}

func TestAwaitInvocationReturnsTheFinalRead(t *testing.T) {
	t.Parallel()
	g := &getter{states: []mt.InvocationState{mt.InvocationRunning, mt.InvocationRunning, mt.InvocationSucceeded}}
	inv, err := ledger.AwaitInvocation(t.Context(), g, "inv_1", time.Millisecond, terminal)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, inv.State)
	require.Equal(t, 3, g.reads)
}

func TestAwaitInvocationLetsTheCallerJudgeAFailedRead(t *testing.T) {
	t.Parallel()
	g := &getter{states: []mt.InvocationState{mt.InvocationRunning}, errAt: 2}
	_, err := ledger.AwaitInvocation(t.Context(), g, "inv_1", time.Millisecond, terminal)
	require.ErrorContains(t, err, "ledger down")
	require.Equal(t, 2, g.reads)
}

func TestAwaitInvocationEndsWithTheContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	g := &getter{states: []mt.InvocationState{mt.InvocationRunning}}
	inv, err := ledger.AwaitInvocation(ctx, g, "inv_1", time.Hour, func(inv ledger.Invocation, err error) (bool, error) {
		cancel()
		return false, nil
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, mt.InvocationRunning, inv.State, "the last read comes back with the context's error")
}
