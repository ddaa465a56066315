package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/maestrotype"
)

// PostCallItemUpsert is one INSERT … ON CONFLICT DO UPDATE whose WHERE
// clause refuses to touch a delivered row, so a re-run or a late retry
// racing a delivery cannot undo it, whichever commits first.
func (l *ledger) PostCallItemUpsert(ctx context.Context, it PostCallItem) (PostCallItem, error) {
	if it.SessionID == "" || it.Key == "" {
		return PostCallItem{}, fmt.Errorf("error upserting post-call item %q of session %q: session ID and key are required", it.Key, it.SessionID)
	}
	if it.Status == "" {
		it.Status = PostCallPending
	}
	if it.Status == PostCallDelivered {
		if err := requireReceipt(it.Receipt); err != nil {
			return PostCallItem{}, fmt.Errorf("error upserting post-call item %q of session %q: %w", it.Key, it.SessionID, err)
		}
	}
	receipt, err := jsonArg(it.Receipt)
	if err != nil {
		return PostCallItem{}, fmt.Errorf("error upserting post-call item %q of session %q: %w", it.Key, it.SessionID, err)
	}

	got, err := scanPostCall(l.conn.QueryRowContext(ctx, l.query("PostCallItemUpsert"),
		it.SessionID,
		it.Key,
		it.Tool,
		it.Source,
		textArg(it.DeferredID),
		it.OperationKey,
		textArg(it.InvocationID),
		string(it.Status),
		receipt,
		textArg(it.Reason),
		rawJSONArg(it.Attempts),
		rawJSONArg(it.Item),
	))
	switch {
	case err == nil:
		return got, nil
	case !errors.Is(err, sql.ErrNoRows):
		return PostCallItem{}, fmt.Errorf("error upserting post-call item %q of session %q: %w", it.Key, it.SessionID, err)
	}
	// The item is delivered and the update was refused. Delivered is
	// final, so the row read now is the one that refused.
	got, err = scanPostCall(l.conn.QueryRowContext(ctx, l.query("PostCallItemGet"), it.SessionID, it.Key))
	if err != nil {
		return PostCallItem{}, fmt.Errorf("error getting post-call item %q of session %q: %w", it.Key, it.SessionID, notFound(err))
	}
	return got, nil
}

func (l *ledger) PostCallItemList(ctx context.Context, sessionID string) ([]PostCallItem, error) {
	items, err := queryAll(ctx, l.conn, scanPostCall, l.query("PostCallItemList"), sessionID)
	if err != nil {
		return nil, fmt.Errorf("error listing post-call items of session %q: %w", sessionID, err)
	}
	return items, nil
}

func (l *ledger) PostCallItemGet(ctx context.Context, sessionID, key string) (PostCallItem, error) {
	it, err := scanPostCall(l.conn.QueryRowContext(ctx, l.query("PostCallItemGet"), sessionID, key))
	if err != nil {
		return PostCallItem{}, fmt.Errorf("error getting post-call item %q of session %q: %w", key, sessionID, notFound(err))
	}
	return it, nil
}

func (l *ledger) PostCallItemListHeld(ctx context.Context, limit int) ([]PostCallItem, error) {
	items, err := queryAll(ctx, l.conn, scanPostCall, l.query("PostCallItemListHeld"), limit)
	if err != nil {
		return nil, fmt.Errorf("error listing held post-call items: %w", err)
	}
	return items, nil
}

func scanPostCall(row rowScanner) (PostCallItem, error) {
	var it PostCallItem
	err := row.Scan(
		&it.SessionID,
		&it.Key,
		&it.Tool,
		&it.Source,
		textCol{&it.DeferredID},
		&it.OperationKey,
		textCol{&it.InvocationID},
		&it.Status,
		jsonCol[*maestrotype.Receipt]{&it.Receipt},
		textCol{&it.Reason},
		rawJSONCol{&it.Attempts},
		rawJSONCol{&it.Item},
		timeCol{&it.CreatedAt},
		timeCol{&it.UpdatedAt},
	)
	return it, err
}
