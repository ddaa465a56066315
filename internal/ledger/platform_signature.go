package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// signaturePruneBatch bounds the expired signatures one claim deletes.
// Each claim adds at most one row and removes up to this many dead ones,
// so dead rows never pile up while requests arrive, and no claim pays for
// a long quiet spell's backlog at once. Pruning here rather than in the
// scheduled sweep keeps the guard whole in the API, which runs without
// the worker's schedules, and costs one indexed delete per signed request.
const signaturePruneBatch = 100

// The errors never name the signature: its ID is the request's MAC, and
// errors end up in logs.
func (l *ledger) PlatformSignatureClaim(ctx context.Context, id string, expires time.Time) (bool, error) {
	switch {
	case id == "":
		return false, errors.New("error claiming a platform signature: the signature ID is required")
	case expires.IsZero():
		return false, errors.New("error claiming a platform signature: an expiry is required")
	}
	// Pruned first: a prune that fails fails the claim before it records
	// anything, so the platform's retry is not taken for a replay.
	if _, err := l.db.ExecContext(ctx, l.query("PlatformSignaturePrune"), signaturePruneBatch); err != nil {
		return false, fmt.Errorf("error deleting expired platform signatures: %w", err)
	}
	var got string
	err := l.conn.QueryRowContext(ctx, l.query("PlatformSignatureClaim"), id, l.timeArg(expires)).Scan(&got)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("error claiming a platform signature: %w", err)
	}
	return true, nil
}

func (l *ledger) PlatformSignatureForget(ctx context.Context, id string) error {
	if id == "" {
		return errors.New("error forgetting a platform signature: the signature ID is required")
	}
	if _, err := l.db.ExecContext(ctx, l.query("PlatformSignatureForget"), id); err != nil {
		return fmt.Errorf("error forgetting a platform signature: %w", err)
	}
	return nil
}
