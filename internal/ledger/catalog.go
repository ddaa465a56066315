package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// CatalogActivate makes a catalog version current: it records the file
// under its version (once), appends an activation unless the version is
// current already, and replaces the mirrored registry with rows, all in
// one transaction under the registry lock. A refused row leaves the old
// version current and its rows in place.
func (l *ledger) CatalogActivate(ctx context.Context, v CatalogVersion, rows []ToolRegistryRow) error {
	if v.Version == "" || len(v.Source) == 0 {
		return errors.New("error activating a catalog version: version and source are required")
	}
	for _, r := range rows {
		if r.CatalogHash != v.Version {
			return fmt.Errorf("error activating catalog version %s: tool %q is of version %q", v.Version, r.Name, r.CatalogHash)
		}
	}
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, l.query("ToolRegistryLock")); err != nil {
			return fmt.Errorf("error taking the registry lock: %w", err)
		}
		if _, err := tx.ExecContext(ctx, l.query("CatalogVersionInsert"), v.Version, v.Source); err != nil {
			return fmt.Errorf("error recording the catalog file: %w", err)
		}
		if _, err := tx.ExecContext(ctx, l.query("CatalogActivationInsert"), v.Version); err != nil {
			return fmt.Errorf("error recording the activation: %w", err)
		}
		return l.replaceRegistry(ctx, tx, rows)
	})
	if err != nil {
		return fmt.Errorf("error activating catalog version %s: %w", v.Version, err)
	}
	return nil
}

// CatalogCurrent returns the version activated last, ErrNotFound before
// any was.
func (l *ledger) CatalogCurrent(ctx context.Context) (string, error) {
	var v string
	err := l.conn.QueryRowContext(ctx, l.query("CatalogActivationCurrent")).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("error reading the current catalog version: %w", err)
	}
	return v, nil
}

// CatalogVersionSource returns the file recorded for a catalog version,
// ErrNotFound for a version never activated.
func (l *ledger) CatalogVersionSource(ctx context.Context, version string) ([]byte, error) {
	var src []byte
	err := l.conn.QueryRowContext(ctx, l.query("CatalogVersionSource"), version).Scan(&src)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("error reading catalog version %s: %w", version, err)
	}
	return src, nil
}

// CatalogActivationList returns the last limit activations, newest first:
// which catalog version became current when. The first is current.
func (l *ledger) CatalogActivationList(ctx context.Context, limit int) ([]CatalogActivation, error) {
	rows, err := l.conn.QueryContext(ctx, l.query("CatalogActivationList"), limit)
	if err != nil {
		return nil, fmt.Errorf("error listing catalog activations: %w", err)
	}
	defer rows.Close()
	out := []CatalogActivation{}
	for rows.Next() {
		var a CatalogActivation
		if err := rows.Scan(&a.Version, timeCol{&a.ActivatedAt}); err != nil {
			return nil, fmt.Errorf("error scanning a catalog activation: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error listing catalog activations: %w", err)
	}
	return out, nil
}
