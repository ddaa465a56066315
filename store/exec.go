package store

import (
	"context"
	"database/sql"
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
