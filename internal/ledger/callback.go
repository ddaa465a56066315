package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// CallbackStatus is where a callback's delivery stands.
type CallbackStatus string

const (
	// CallbackPending: owed, and not yet accepted by the agent's receiver.
	CallbackPending CallbackStatus = "pending"
	// CallbackDelivered: the receiver answered 2xx once; nothing more is sent.
	CallbackDelivered CallbackStatus = "delivered"
	// CallbackFailed: every allowed attempt failed; nothing more is sent.
	CallbackFailed CallbackStatus = "failed"
)

// Callback is the final observation an invocation answered "pending" owes
// its agent, and how its delivery stands.
type Callback struct {
	InvocationID  string
	AgentID       string
	URL           string
	Status        CallbackStatus
	Attempts      int
	LastError     string
	NextAttemptAt time.Time
	CreatedAt     time.Time
	DeliveredAt   *time.Time
}

func (l *ledger) CallbackOwe(ctx context.Context, invocationID, agentID, url string) error {
	if invocationID == "" || agentID == "" || url == "" {
		return errors.New("error owing a callback: invocation ID, agent ID and URL are required")
	}
	if _, err := l.db.ExecContext(ctx, l.query("CallbackOwe"), invocationID, agentID, url); err != nil {
		return fmt.Errorf("error owing a callback for invocation %s: %w", invocationID, err)
	}
	return nil
}

func (l *ledger) CallbackGet(ctx context.Context, invocationID string) (Callback, error) {
	c, err := scanCallback(l.conn.QueryRowContext(ctx, l.query("CallbackGet"), invocationID))
	if err != nil {
		return Callback{}, fmt.Errorf("error getting the callback of invocation %s: %w", invocationID, notFound(err))
	}
	return c, nil
}

func (l *ledger) CallbackClaimDue(ctx context.Context, lease time.Duration, limit int) ([]Callback, error) {
	if lease <= 0 {
		return nil, fmt.Errorf("error claiming due callbacks: lease must be positive, got %s", lease)
	}
	cs, err := queryAll(ctx, l.conn, scanCallback, l.query("CallbackClaimDue"), lease.Milliseconds(), listLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("error claiming due callbacks: %w", err)
	}
	return cs, nil
}

// CallbackMarkDelivered, CallbackMarkFailed and CallbackGiveUp touch only a
// pending callback: a settled one stays as it is.
func (l *ledger) CallbackMarkDelivered(ctx context.Context, invocationID string) error {
	if _, err := l.db.ExecContext(ctx, l.query("CallbackMarkDelivered"), invocationID); err != nil {
		return fmt.Errorf("error marking the callback of invocation %s delivered: %w", invocationID, err)
	}
	return nil
}

func (l *ledger) CallbackMarkFailed(ctx context.Context, invocationID, reason string, retryIn time.Duration) error {
	if retryIn < 0 {
		return fmt.Errorf("error marking the callback of invocation %s failed: negative retry delay %s", invocationID, retryIn)
	}
	if _, err := l.db.ExecContext(ctx, l.query("CallbackMarkFailed"), invocationID, reason, retryIn.Milliseconds()); err != nil {
		return fmt.Errorf("error marking the callback of invocation %s failed: %w", invocationID, err)
	}
	return nil
}

func (l *ledger) CallbackGiveUp(ctx context.Context, invocationID, reason string) error {
	if reason == "" {
		return fmt.Errorf("error giving up the callback of invocation %s: a reason is required", invocationID)
	}
	if _, err := l.db.ExecContext(ctx, l.query("CallbackGiveUp"), invocationID, reason); err != nil {
		return fmt.Errorf("error giving up the callback of invocation %s: %w", invocationID, err)
	}
	return nil
}

func scanCallback(row rowScanner) (Callback, error) {
	var c Callback
	err := row.Scan(
		&c.InvocationID,
		&c.AgentID,
		&c.URL,
		&c.Status,
		&c.Attempts,
		textCol{&c.LastError},
		timeCol{&c.NextAttemptAt},
		timeCol{&c.CreatedAt},
		nullTimeCol{&c.DeliveredAt},
	)
	return c, err
}
