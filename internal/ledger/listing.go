package ledger

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// QueueKind names what a reconciliation queue row is.
type QueueKind string

const (
	// QueueHeldPostCall is post-call work held for a human.
	QueueHeldPostCall QueueKind = "held_postcall"
	// QueueHeldEffect is an effect held in needs_reconciliation.
	QueueHeldEffect QueueKind = "held_effect"
	// QueueUndelivered is a succeeded send whose message the
	// provider then reported undelivered, failed or canceled.
	QueueUndelivered QueueKind = "undelivered"
	// QueueHeldSignal is a signal Temporal refused as invalid, held for a
	// human (see OutboxMarkHeld).
	QueueHeldSignal QueueKind = "held_signal"
)

// ReconciliationItem is one row of the reconciliation queue: what it is and
// the key to read it by.
type ReconciliationItem struct {
	Kind QueueKind
	// Rank, At and OperationKey place the row in the queue (see
	// ReconciliationPage).
	Rank int
	At   time.Time
	// OperationKey is the effect's key, the post-call item's, or the held
	// signal's (OutboxHeldKey).
	OperationKey string
	// SessionID and ItemKey name a held post-call item; empty otherwise.
	SessionID string
	ItemKey   string
}

func (l *ledger) ApprovalRequestPage(ctx context.Context, q PageQuery) (Page[ApprovalRequest], error) {
	p, err := page(ctx, l, q, l.afterArgs(q), scanApproval, "ApprovalRequestPage", "ApprovalRequestCount",
		func(a ApprovalRequest) Cursor { return Cursor{At: a.CreatedAt, Key: a.ID} })
	if err != nil {
		return p, fmt.Errorf("error listing approval requests: %w", err)
	}
	return p, nil
}

func (l *ledger) SessionPage(ctx context.Context, q PageQuery) (Page[Session], error) {
	p, err := page(ctx, l, q, l.afterArgs(q), scanSession, "SessionPage", "SessionCount",
		func(s Session) Cursor { return Cursor{At: s.CreatedAt, Key: s.ID} })
	if err != nil {
		return p, fmt.Errorf("error listing sessions: %w", err)
	}
	return p, nil
}

func (l *ledger) RefusalPage(ctx context.Context, q PageQuery) (Page[Refusal], error) {
	after := l.afterArgs(q)
	if q.After != nil {
		// Refusals are numbered by the database, so their cursor's key is
		// a number.
		id, err := strconv.ParseInt(q.After.Key, 10, 64)
		if err != nil {
			return Page[Refusal]{}, fmt.Errorf("error listing refusals: %w", ErrBadCursor)
		}
		after[2] = id
	}
	p, err := page(ctx, l, q, after, scanRefusal, "RefusalPage", "RefusalCount",
		func(r Refusal) Cursor { return Cursor{At: r.CreatedAt, Key: strconv.FormatInt(r.ID, 10)} })
	if err != nil {
		return p, fmt.Errorf("error listing refusals: %w", err)
	}
	return p, nil
}

func (l *ledger) ReconciliationPage(ctx context.Context, q PageQuery) (Page[ReconciliationItem], error) {
	p, err := page(ctx, l, q, l.afterArgs(q), scanReconciliationItem, "ReconciliationPage", "ReconciliationCount",
		func(it ReconciliationItem) Cursor { return Cursor{Rank: it.Rank, At: it.At, Key: it.OperationKey} })
	if err != nil {
		return p, fmt.Errorf("error listing the reconciliation queue: %w", err)
	}
	return p, nil
}

func scanReconciliationItem(row rowScanner) (ReconciliationItem, error) {
	var it ReconciliationItem
	err := row.Scan(&it.Kind, &it.Rank, timeCol{&it.At}, &it.OperationKey, textCol{&it.SessionID}, textCol{&it.ItemKey})
	return it, err
}
