package store

import (
	"context"
	"database/sql"
	"fmt"
)

// ToolRegistrySync replaces the mirrored catalog with rows in one
// transaction: readers see the old set or the new one, and a row the CHECK
// constraints refuse leaves the old set in place.
func (l *ledger) ToolRegistrySync(ctx context.Context, rows []ToolRegistryRow) error {
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, l.query("ToolRegistryDeleteAll")); err != nil {
			return fmt.Errorf("error clearing the registry: %w", err)
		}
		for _, r := range rows {
			_, err := tx.ExecContext(ctx, l.query("ToolRegistryInsert"),
				r.Name,
				string(r.Effect),
				string(r.Delivery),
				string(r.Reversibility),
				textArg(r.CompensationTool),
				textArg(r.ApproverRole),
				r.ConnectorKind,
				r.Owner,
				r.CatalogHash,
			)
			if err != nil {
				return fmt.Errorf("error inserting tool %q: %w", r.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("error syncing the tool registry: %w", err)
	}
	return nil
}

func (l *ledger) ToolRegistryList(ctx context.Context) ([]ToolRegistryRow, error) {
	rows, err := queryAll(ctx, l.db, scanToolRegistryRow, l.query("ToolRegistryList"))
	if err != nil {
		return nil, fmt.Errorf("error listing the tool registry: %w", err)
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
