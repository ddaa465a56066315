package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/maestrotype"
)

func (l *ledger) DeferredInsert(ctx context.Context, d DeferredItem) (DeferredItem, error) {
	if d.Status == "" {
		d.Status = DeferredRecorded
	}
	receipt, err := jsonArg(d.Receipt)
	if err != nil {
		return DeferredItem{}, fmt.Errorf("error inserting deferred item: %w", err)
	}
	got, err := scanDeferred(l.db.QueryRowContext(ctx, l.query("DeferredInsert"),
		idOr(d.ID, "def"),
		d.SessionID,
		d.OperationKey,
		d.Tool,
		rawJSONArg(d.Args),
		string(d.Status),
		receipt,
		textArg(d.Reason),
	))
	switch {
	case err == nil:
		return got, nil
	case !errors.Is(err, sql.ErrNoRows):
		return DeferredItem{}, fmt.Errorf("error inserting deferred item: %w", err)
	}
	// The key is already recorded; ON CONFLICT waited for its writer to
	// commit, so the row is visible now.
	got, err = scanDeferred(l.db.QueryRowContext(ctx, l.query("DeferredGetByKey"), d.OperationKey))
	if err != nil {
		return DeferredItem{}, fmt.Errorf("error getting deferred item by key %q: %w", d.OperationKey, notFound(err))
	}
	return got, nil
}

func (l *ledger) DeferredListBySession(ctx context.Context, sessionID string) ([]DeferredItem, error) {
	items, err := queryAll(ctx, l.db, scanDeferred, l.query("DeferredListBySession"), sessionID)
	if err != nil {
		return nil, fmt.Errorf("error listing deferred items of session %q: %w", sessionID, err)
	}
	return items, nil
}

func scanDeferred(row rowScanner) (DeferredItem, error) {
	var d DeferredItem
	err := row.Scan(
		&d.ID,
		&d.SessionID,
		&d.OperationKey,
		&d.Tool,
		rawJSONCol{&d.Args},
		&d.Status,
		jsonCol[*maestrotype.Receipt]{&d.Receipt},
		textCol{&d.Reason},
		timeCol{&d.CreatedAt},
		timeCol{&d.UpdatedAt},
	)
	return d, err
}
