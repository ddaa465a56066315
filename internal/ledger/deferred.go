package ledger

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
	if d.Status == DeferredDelivered {
		if err := requireReceipt(d.Receipt); err != nil {
			return DeferredItem{}, fmt.Errorf("error inserting deferred item: %w", err)
		}
	}
	receipt, err := jsonArg(d.Receipt)
	if err != nil {
		return DeferredItem{}, fmt.Errorf("error inserting deferred item: %w", err)
	}
	got, err := scanDeferred(l.conn.QueryRowContext(ctx, l.query("DeferredInsert"),
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
	got, err = scanDeferred(l.conn.QueryRowContext(ctx, l.query("DeferredGetByKey"), d.OperationKey))
	if err != nil {
		return DeferredItem{}, fmt.Errorf("error getting deferred item by key %q: %w", d.OperationKey, notFound(err))
	}
	return got, nil
}

func (l *ledger) DeferredGet(ctx context.Context, id string) (DeferredItem, error) {
	d, err := scanDeferred(l.conn.QueryRowContext(ctx, l.query("DeferredGet"), id))
	if err != nil {
		return DeferredItem{}, fmt.Errorf("error getting deferred item %q: %w", id, notFound(err))
	}
	return d, nil
}

func (l *ledger) DeferredSetOutcome(ctx context.Context, id string, status DeferredStatus, receipt *maestrotype.Receipt, reason string) (DeferredItem, error) {
	switch status {
	case DeferredDelivered:
		if err := requireReceipt(receipt); err != nil {
			return DeferredItem{}, fmt.Errorf("error setting outcome of deferred item %q: %w", id, err)
		}
	case DeferredFailed, DeferredHeld:
		// The item is left for a retry or a human, and either needs to
		// know what went wrong.
		if reason == "" {
			return DeferredItem{}, fmt.Errorf("error setting outcome of deferred item %q: a failure needs a reason", id)
		}
	default:
		return DeferredItem{}, fmt.Errorf("error setting outcome of deferred item %q: %q is not an outcome of a delivery", id, status)
	}
	receiptArg, err := jsonArg(receipt)
	if err != nil {
		return DeferredItem{}, fmt.Errorf("error setting outcome of deferred item %q: %w", id, err)
	}

	d, moved, err := transition(ctx, l, scanDeferred, "DeferredGetForUpdate", "DeferredSetOutcome", id,
		string(status), receiptArg, textArg(reason))
	if err != nil {
		return DeferredItem{}, fmt.Errorf("error setting outcome of deferred item %q: %w", id, err)
	}
	if !moved {
		return d, fmt.Errorf("error setting outcome of deferred item %q: it is %s, so it cannot become %s: %w", id, d.Status, status, ErrDeferredTransition)
	}
	return d, nil
}

// requireReceipt holds a delivery to its proof: the ledger says delivered
// only with the provider's receipt, and a receipt without the provider's
// ID proves nothing anyone could look up. The tables' CHECKs hold the
// first half against writers that bypass the store.
func requireReceipt(r *maestrotype.Receipt) error {
	if r == nil || r.ID == "" {
		return errors.New("a delivery needs a receipt with the provider's ID")
	}
	return nil
}

func (l *ledger) DeferredListBySession(ctx context.Context, sessionID string) ([]DeferredItem, error) {
	items, err := queryAll(ctx, l.conn, scanDeferred, l.query("DeferredListBySession"), sessionID)
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
