package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// querier is what *sql.DB and *sql.Tx have in common, so a helper can run
// inside or outside a transaction.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// rowScanner is what *sql.Row and *sql.Rows have in common.
type rowScanner interface {
	Scan(dest ...any) error
}

// withTx runs fn in a transaction, committing if fn returns nil.
func (l *ledger) withTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("error beginning transaction: %w", err)
	}
	// A no-op once committed; otherwise it releases the locks fn took, even
	// if fn panicked.
	defer func() { _ = tx.Rollback() }()

	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("error committing transaction: %w", err)
	}
	return nil
}

// transition changes one row's status in a transaction. The lock query
// reads the row and holds it until the transaction ends; the move query, a
// conditional UPDATE … RETURNING whose WHERE clause is the rule, then
// changes it only if the rule allows. It returns the row as moved, or as
// the lock read it with moved=false, so a refusal is explained by the state
// the UPDATE itself saw rather than by whatever a later read would find.
// Both queries take id as $1; args follow it in the move.
func transition[T any](ctx context.Context, l *ledger, scan func(rowScanner) (T, error), lock, move, id string, args ...any) (row T, moved bool, err error) {
	err = l.withTx(ctx, func(tx *sql.Tx) error {
		before, err := scan(tx.QueryRowContext(ctx, l.query(lock), id))
		if err != nil {
			return fmt.Errorf("error locking the row: %w", notFound(err))
		}
		after, err := scan(tx.QueryRowContext(ctx, l.query(move), append([]any{id}, args...)...))
		switch {
		case err == nil:
			row, moved = after, true
		case errors.Is(err, sql.ErrNoRows):
			row, moved = before, false
		default:
			return fmt.Errorf("error updating the row: %w", err)
		}
		return nil
	})
	if err != nil {
		var zero T
		return zero, false, err
	}
	return row, moved, nil
}

// queryAll runs a query and scans every row. It returns an empty slice, not
// nil, when nothing matches, so callers encoding JSON print [] rather than
// null.
func queryAll[T any](ctx context.Context, q querier, scan func(rowScanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()

	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// expectOne turns an update that matched no row into errNone.
func expectOne(res sql.Result, errNone error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return errNone
	}
	return nil
}

// listLimit applies DefaultListLimit to a caller's limit.
func listLimit(limit int) int {
	if limit <= 0 {
		return DefaultListLimit
	}
	return limit
}
