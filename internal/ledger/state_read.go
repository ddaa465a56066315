package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/maestrotype"
)

// EffectStateReads are the before and after reads recorded with one effect.
type EffectStateReads struct {
	OperationKey string
	// Before is nil when the tool declares no before read, or the effect
	// has not reached it.
	Before *maestrotype.StateRead
	// After is nil until a read-back of the succeeded effect is recorded.
	After *maestrotype.StateRead
}

func (l *ledger) EffectRecordBeforeRead(ctx context.Context, operationKey, owner string, read maestrotype.StateRead) error {
	arg, err := jsonArg(&read)
	if err != nil {
		return fmt.Errorf("error recording the before read of effect %q: %w", operationKey, err)
	}
	res, err := l.db.ExecContext(ctx, l.query("EffectRecordBeforeRead"), operationKey, owner, arg)
	if err == nil {
		// No row: another attempt holds the key, it is settled, or a
		// before read is already recorded; either way not this one's to
		// record.
		err = expectOne(res, ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("error recording the before read of effect %q: %w", operationKey, err)
	}
	return nil
}

func (l *ledger) EffectRecordAfterRead(ctx context.Context, operationKey string, read maestrotype.StateRead) (EffectStateReads, bool, error) {
	arg, err := jsonArg(&read)
	if err != nil {
		return EffectStateReads{}, false, fmt.Errorf("error recording the after read of effect %q: %w", operationKey, err)
	}
	r, err := scanStateReads(l.db.QueryRowContext(ctx, l.query("EffectRecordAfterRead"), operationKey, arg))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return EffectStateReads{}, false, nil
	case err != nil:
		return EffectStateReads{}, false, fmt.Errorf("error recording the after read of effect %q: %w", operationKey, err)
	}
	return r, true, nil
}

func (l *ledger) EffectStateReadsGet(ctx context.Context, operationKey string) (EffectStateReads, error) {
	r, err := scanStateReads(l.conn.QueryRowContext(ctx, l.query("EffectStateReadsGet"), operationKey))
	if err != nil {
		return EffectStateReads{}, fmt.Errorf("error getting the state reads of effect %q: %w", operationKey, notFound(err))
	}
	return r, nil
}

func (l *ledger) EffectStateReadsListBySession(ctx context.Context, sessionID string) ([]EffectStateReads, error) {
	rs, err := queryAll(ctx, l.conn, scanStateReads, l.query("EffectStateReadsListBySession"), sessionID)
	if err != nil {
		return nil, fmt.Errorf("error listing the state reads of session %q: %w", sessionID, err)
	}
	return rs, nil
}

func scanStateReads(row rowScanner) (EffectStateReads, error) {
	var r EffectStateReads
	err := row.Scan(&r.OperationKey, jsonCol[*maestrotype.StateRead]{&r.Before}, jsonCol[*maestrotype.StateRead]{&r.After})
	return r, err
}
