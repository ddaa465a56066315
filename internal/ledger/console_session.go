package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ConsoleSession is a signed-in operator of the browser console.
type ConsoleSession struct {
	// IDHash is the SHA-256 of the token in the session's cookie, hex
	// encoded; the token itself is never stored.
	IDHash     string
	OperatorID string
	// CSRFToken is echoed in every form the session posts.
	CSRFToken string
	// KeyBinding names the operator key the session was signed in with
	// (see tools.Operator.KeyBinding): the session holds only while the
	// served catalog still gives the operator that key.
	KeyBinding string
	CreatedAt  time.Time
	ExpiresAt  time.Time
}

// consolePruneBatch bounds the expired sessions one sign-in deletes, so
// sign-ins keep the table near one lifetime of sessions without any one
// of them paying for a long backlog.
const consolePruneBatch = 100

func (l *ledger) ConsoleSessionCreate(ctx context.Context, s ConsoleSession) error {
	switch {
	case s.IDHash == "" || s.OperatorID == "" || s.CSRFToken == "" || s.KeyBinding == "":
		return errors.New("error creating a console session: the ID hash, operator, CSRF token and key binding are required")
	case s.ExpiresAt.IsZero():
		return errors.New("error creating a console session: an expiry is required")
	}
	if _, err := l.db.ExecContext(ctx, l.query("ConsoleSessionPrune"), consolePruneBatch); err != nil {
		return fmt.Errorf("error deleting expired console sessions: %w", err)
	}
	if _, err := l.db.ExecContext(ctx, l.query("ConsoleSessionInsert"), s.IDHash, s.OperatorID, s.CSRFToken, l.timeArg(s.ExpiresAt), s.KeyBinding); err != nil {
		return fmt.Errorf("error creating a console session: %w", err)
	}
	return nil
}

func (l *ledger) ConsoleSessionGet(ctx context.Context, idHash string) (ConsoleSession, error) {
	s := ConsoleSession{IDHash: idHash}
	err := l.conn.QueryRowContext(ctx, l.query("ConsoleSessionGet"), idHash).
		Scan(&s.OperatorID, &s.CSRFToken, timeCol{&s.CreatedAt}, timeCol{&s.ExpiresAt}, &s.KeyBinding)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ConsoleSession{}, ErrNotFound
	case err != nil:
		return ConsoleSession{}, fmt.Errorf("error reading a console session: %w", err)
	}
	return s, nil
}

func (l *ledger) ConsoleSessionDelete(ctx context.Context, idHash string) error {
	if _, err := l.db.ExecContext(ctx, l.query("ConsoleSessionDelete"), idHash); err != nil {
		return fmt.Errorf("error deleting a console session: %w", err)
	}
	return nil
}
