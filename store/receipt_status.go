package store

import (
	"context"
	"errors"
	"fmt"
)

// EffectReceiptStatusUpdate records a provider's later word on an effect it
// already receipted, such as Twilio reporting a message delivered. It moves
// the status of every receipt carrying the provider ID id (more than one
// only if reconciliation adopted one provider record for several keys) and
// returns the effects as updated: empty, not an error, when no receipt
// carries id, because a provider may report on effects this ledger never
// claimed.
func (l *ledger) EffectReceiptStatusUpdate(ctx context.Context, id, status string) ([]Effect, error) {
	if id == "" || status == "" {
		return nil, errors.New("error updating receipt status: a receipt ID and a status are required")
	}
	scan := func(row rowScanner) (Effect, error) { return scanEffect(row) }
	effs, err := queryAll(ctx, l.db, scan, l.query("EffectReceiptStatusUpdate"), id, status)
	if err != nil {
		return nil, fmt.Errorf("error updating status of receipt %q: %w", id, err)
	}
	return effs, nil
}
