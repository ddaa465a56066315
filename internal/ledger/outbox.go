package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

func (l *ledger) insertOutbox(ctx context.Context, q querier, s OutboxSignal) (OutboxSignal, error) {
	return l.queueOutbox(ctx, q, s, false)
}

// queueOutbox writes s owed, or, when its one attempt was already
// delivered, as delivered: the delivery is recorded by the insert itself.
func (l *ledger) queueOutbox(ctx context.Context, q querier, s OutboxSignal, delivered bool) (OutboxSignal, error) {
	switch {
	case s.WorkflowID == "":
		return OutboxSignal{}, errors.New("error queueing signal: workflow ID is required")
	case s.SignalName == "":
		return OutboxSignal{}, errors.New("error queueing signal: signal name is required")
	case len(s.Payload) == 0:
		return OutboxSignal{}, errors.New("error queueing signal: payload is required")
	}
	got, err := scanOutbox(q.QueryRowContext(ctx, l.query("OutboxInsert"), s.WorkflowID, s.SignalName, rawJSONArg(s.Payload), textArg(s.ApprovalID), delivered))
	if err != nil {
		return OutboxSignal{}, fmt.Errorf("error queueing signal %s to %s: %w", s.SignalName, s.WorkflowID, err)
	}
	return got, nil
}

func (l *ledger) OutboxInsert(ctx context.Context, s OutboxSignal) (OutboxSignal, error) {
	return l.insertOutbox(ctx, l.conn, s)
}

func (l *ledger) OutboxListDue(ctx context.Context, limit int) ([]OutboxSignal, error) {
	sigs, err := queryAll(ctx, l.conn, scanOutbox, l.query("OutboxListDue"), listLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("error listing due signals: %w", err)
	}
	return sigs, nil
}

func (l *ledger) OutboxGet(ctx context.Context, id int64) (OutboxSignal, error) {
	s, err := scanOutbox(l.conn.QueryRowContext(ctx, l.query("OutboxGet"), id))
	if err != nil {
		return OutboxSignal{}, fmt.Errorf("error getting signal %d: %w", id, notFound(err))
	}
	return s, nil
}

// OutboxMarkDelivered, OutboxMarkFailed, OutboxMarkAbandoned and
// OutboxMarkHeld touch only a signal still owed: a relay racing another one cannot move a settled
// row, and the loser's update is a no-op.
func (l *ledger) OutboxMarkDelivered(ctx context.Context, id int64) error {
	if _, err := l.db.ExecContext(ctx, l.query("OutboxMarkDelivered"), id); err != nil {
		return fmt.Errorf("error marking signal %d delivered: %w", id, err)
	}
	return nil
}

func (l *ledger) OutboxMarkFailed(ctx context.Context, id int64, reason string, retryIn time.Duration) error {
	if retryIn < 0 {
		return fmt.Errorf("error marking signal %d failed: negative retry delay %s", id, retryIn)
	}
	if _, err := l.db.ExecContext(ctx, l.query("OutboxMarkFailed"), id, reason, retryIn.Milliseconds()); err != nil {
		return fmt.Errorf("error marking signal %d failed: %w", id, err)
	}
	return nil
}

func (l *ledger) OutboxMarkAbandoned(ctx context.Context, id int64, reason string) error {
	if reason == "" {
		return fmt.Errorf("error abandoning signal %d: a reason is required", id)
	}
	if _, err := l.db.ExecContext(ctx, l.query("OutboxMarkAbandoned"), id, reason); err != nil {
		return fmt.Errorf("error abandoning signal %d: %w", id, err)
	}
	return nil
}

func (l *ledger) OutboxMarkHeld(ctx context.Context, id int64, reason string) error {
	if reason == "" {
		return fmt.Errorf("error holding signal %d: a reason is required", id)
	}
	if _, err := l.db.ExecContext(ctx, l.query("OutboxMarkHeld"), id, reason); err != nil {
		return fmt.Errorf("error holding signal %d: %w", id, err)
	}
	return nil
}

// outboxHeldPrefix starts the key a held signal is reconciled under; the
// reconciliation queries build the same key.
const outboxHeldPrefix = "signal:"

// OutboxHeldKey is the key a held signal is listed under in the
// reconciliation queue.
func OutboxHeldKey(id int64) string { return outboxHeldPrefix + strconv.FormatInt(id, 10) }

// ParseOutboxHeldKey reads an OutboxHeldKey back; ok is false for any
// other key.
func ParseOutboxHeldKey(key string) (id int64, ok bool) {
	rest, found := strings.CutPrefix(key, outboxHeldPrefix)
	if !found {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil && id > 0
}

func (l *ledger) SessionEndSignalled(ctx context.Context, id string, transcript []byte, signal OutboxSignal) (Session, bool, OutboxSignal, error) {
	var (
		s      Session
		ended  bool
		queued OutboxSignal
	)
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		before, err := scanSession(tx.QueryRowContext(ctx, l.query("SessionGetForUpdate"), id))
		if err != nil {
			return fmt.Errorf("error locking the row: %w", notFound(err))
		}
		after, err := scanSession(tx.QueryRowContext(ctx, l.query("SessionEnd"), id, rawJSONArg(transcript)))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			s = before
			return nil
		case err != nil:
			return fmt.Errorf("error updating the row: %w", err)
		}
		s, ended = after, true
		queued, err = l.insertOutbox(ctx, tx, signal)
		return err
	})
	if err != nil {
		return Session{}, false, OutboxSignal{}, fmt.Errorf("error ending session %q: %w", id, err)
	}
	return s, ended, queued, nil
}

func scanOutbox(row rowScanner) (OutboxSignal, error) {
	var s OutboxSignal
	err := row.Scan(
		&s.ID,
		&s.WorkflowID,
		&s.SignalName,
		rawJSONCol{&s.Payload},
		textCol{&s.ApprovalID},
		&s.Attempts,
		textCol{&s.LastError},
		timeCol{&s.NextAttemptAt},
		timeCol{&s.CreatedAt},
		nullTimeCol{&s.DeliveredAt},
		nullTimeCol{&s.AbandonedAt},
		nullTimeCol{&s.HeldAt},
	)
	return s, err
}
