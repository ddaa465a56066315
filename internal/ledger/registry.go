package ledger

import (
	"context"
	"database/sql"
	"fmt"
)

// ToolRegistrySync replaces the mirrored catalog with rows in one
// transaction: readers see the old set or the new one, and a row the CHECK
// constraints refuse leaves the old set in place. Each row is also
// appended to the registry's history under its catalog version, which
// nothing rewrites.
func (l *ledger) ToolRegistrySync(ctx context.Context, rows []ToolRegistryRow) error {
	for _, r := range rows {
		if r.CatalogHash == "" {
			return fmt.Errorf("error syncing the tool registry: tool %q has no catalog hash", r.Name)
		}
	}
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, l.query("ToolRegistryLock")); err != nil {
			return fmt.Errorf("error taking the registry lock: %w", err)
		}
		return l.replaceRegistry(ctx, tx, rows)
	})
	if err != nil {
		return fmt.Errorf("error syncing the tool registry: %w", err)
	}
	return nil
}

// replaceRegistry replaces the mirrored rows and appends each to the
// history, inside the caller's transaction holding the registry lock.
func (l *ledger) replaceRegistry(ctx context.Context, tx *sql.Tx, rows []ToolRegistryRow) error {
	for _, r := range rows {
		if r.CatalogHash == "" {
			return fmt.Errorf("tool %q has no catalog hash", r.Name)
		}
	}
	if _, err := tx.ExecContext(ctx, l.query("ToolRegistryDeleteAll")); err != nil {
		return fmt.Errorf("error clearing the registry: %w", err)
	}
	for _, r := range rows {
		// The row as the current registry and its history both hold it.
		row := []any{r.Name, string(r.Effect), string(r.Delivery), string(r.Reversibility),
			textArg(r.CompensationTool), textArg(r.ApproverRole), r.ConnectorKind, r.Owner}
		if _, err := tx.ExecContext(ctx, l.query("ToolRegistryInsert"), append(row, r.CatalogHash)...); err != nil {
			return fmt.Errorf("error inserting tool %q: %w", r.Name, err)
		}
		if _, err := tx.ExecContext(ctx, l.query("ToolRegistryVersionInsert"), append([]any{r.CatalogHash}, row...)...); err != nil {
			return fmt.Errorf("error recording tool %q in the registry history: %w", r.Name, err)
		}
	}
	return nil
}

func (l *ledger) ToolRegistryList(ctx context.Context) ([]ToolRegistryRow, error) {
	rows, err := queryAll(ctx, l.conn, scanToolRegistryRow, l.query("ToolRegistryList"))
	if err != nil {
		return nil, fmt.Errorf("error listing the tool registry: %w", err)
	}
	return rows, nil
}

// ToolRegistryHistory returns every classification of the named tool
// ever synced, oldest first, one row per catalog version (CatalogHash).
func (l *ledger) ToolRegistryHistory(ctx context.Context, name string) ([]ToolRegistryRow, error) {
	rows, err := queryAll(ctx, l.conn, scanToolRegistryRow, l.query("ToolRegistryVersionListByName"), name)
	if err != nil {
		return nil, fmt.Errorf("error listing the registry history of %q: %w", name, err)
	}
	return rows, nil
}

func scanToolRegistryRow(row rowScanner) (ToolRegistryRow, error) {
	var r ToolRegistryRow
	err := row.Scan(
		&r.Name,
		&r.Effect,
		&r.Delivery,
		&r.Reversibility,
		textCol{&r.CompensationTool},
		textCol{&r.ApproverRole},
		&r.ConnectorKind,
		&r.Owner,
		&r.CatalogHash,
	)
	return r, err
}
