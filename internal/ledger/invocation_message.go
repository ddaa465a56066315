package ledger

import (
	"context"
	"fmt"
	"time"
)

// InvocationGetWithMessage reads an invocation with the latest status
// provider reported for the message its receipt names (nil when it names
// none or none was reported), in one statement: an answer needs both.
func (l *ledger) InvocationGetWithMessage(ctx context.Context, id, provider string) (Invocation, *MessageStatus, error) {
	var (
		inv              Invocation
		m                MessageStatus
		created, updated *time.Time
	)
	dest := append(invocationDest(&inv),
		textCol{&m.Provider},
		textCol{&m.MessageID},
		textCol{(*string)(&m.Status)},
		textCol{&m.Recipient},
		textCol{&m.ErrorCode},
		nullTimeCol{&created},
		nullTimeCol{&updated},
	)
	if err := l.conn.QueryRowContext(ctx, l.query("InvocationGetWithMessage"), id, provider).Scan(dest...); err != nil {
		return Invocation{}, nil, fmt.Errorf("error getting invocation %q: %w", id, notFound(err))
	}
	if m.MessageID == "" {
		return inv, nil, nil
	}
	if created != nil {
		m.CreatedAt = *created
	}
	if updated != nil {
		m.UpdatedAt = *updated
	}
	return inv, &m, nil
}
