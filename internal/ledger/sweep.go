package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// ErrInvocationFinal is returned by InvocationFinishOpen when the
// invocation was already final: its outcome stands.
var ErrInvocationFinal = errors.New("invocation is already final")

func (l *ledger) EffectListLeaseExpired(ctx context.Context, limit int) ([]Effect, error) {
	scan := func(row rowScanner) (Effect, error) { return scanEffect(row) }
	effs, err := queryAll(ctx, l.conn, scan, l.query("EffectListLeaseExpired"), listLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("error listing in-progress effects past their lease: %w", err)
	}
	return effs, nil
}

func (l *ledger) InvocationListOpen(ctx context.Context, idleFor time.Duration, limit int) ([]Invocation, error) {
	if idleFor < 0 {
		return nil, fmt.Errorf("error listing open invocations: idle time %s is negative", idleFor)
	}
	invs, err := queryAll(ctx, l.conn, scanInvocation, l.query("InvocationListOpen"), idleFor.Milliseconds(), listLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("error listing open invocations: %w", err)
	}
	return invs, nil
}

func (l *ledger) InvocationFinishOpen(ctx context.Context, id string, state maestrotype.InvocationState, obs maestrotype.Observation) error {
	if !state.Terminal() {
		return fmt.Errorf("error finishing invocation %q: state %q is not final", id, state)
	}
	obsArg, err := jsonArg(&obs)
	if err != nil {
		return fmt.Errorf("error finishing invocation %q: %w", id, err)
	}
	res, err := l.db.ExecContext(ctx, l.query("InvocationFinishOpen"), id, string(state), obsArg)
	if err != nil {
		return fmt.Errorf("error finishing invocation %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	// Nothing changed: either the row is final already or it is missing.
	if _, err := l.InvocationGet(ctx, id); err != nil {
		return err
	}
	return fmt.Errorf("error finishing invocation %q: %w", id, ErrInvocationFinal)
}
