package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// MessageStatusReport is one status callback from a messaging provider.
type MessageStatusReport struct {
	Provider  string // "twilio"; required
	MessageID string // the provider's message ID (a Twilio SID); required
	Status    maestrotype.MessageStatus
	// Recipient is the number the message was sent to, when the callback
	// names it. Optional.
	Recipient string
	// ErrorCode is the provider's reason for a failed status. Optional.
	ErrorCode string
	// IdempotencyToken is the provider's token for this callback
	// (Twilio's I-Twilio-Idempotency-Token), when it sends one. Optional.
	IdempotencyToken string
}

func (r MessageStatusReport) validate() error {
	switch {
	case r.Provider == "" || r.MessageID == "":
		return errors.New("a provider and a message ID are required")
	case !r.Status.Valid():
		return fmt.Errorf("%q is not a message status", r.Status)
	}
	return nil
}

// MessageStatusOutcome is what recording a status callback did.
type MessageStatusOutcome string

const (
	// MessageStatusRecorded: the first word on the message.
	MessageStatusRecorded MessageStatusOutcome = "recorded"
	// MessageStatusAdvanced: the message moved on to the reported status.
	MessageStatusAdvanced MessageStatusOutcome = "advanced"
	// MessageStatusStale: the report arrived after a later status; it is
	// logged and the status stays.
	MessageStatusStale MessageStatusOutcome = "stale"
	// MessageStatusReplayed: the same status for the message, or the same
	// idempotency token, was recorded before; nothing changed.
	MessageStatusReplayed MessageStatusOutcome = "replayed"
)

// MessageStatus is the latest status a provider reported for a message.
type MessageStatus struct {
	Provider  string
	MessageID string
	Status    maestrotype.MessageStatus
	Recipient string
	// ErrorCode is the provider's reason for the current status; empty
	// unless the message failed.
	ErrorCode string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// EffectMessage is an effect and the status of the message its receipt
// names.
type EffectMessage struct {
	Effect  Effect
	Message MessageStatus
}

func (l *ledger) MessageStatusRecord(ctx context.Context, r MessageStatusReport) (MessageStatus, MessageStatusOutcome, error) {
	if err := r.validate(); err != nil {
		return MessageStatus{}, "", fmt.Errorf("error recording message status: %w", err)
	}
	var (
		got     MessageStatus
		outcome MessageStatusOutcome
	)
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, l.query("MessageStatusCallbackInsert"),
			r.Provider, r.MessageID, string(r.Status), textArg(r.ErrorCode), textArg(r.IdempotencyToken)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			outcome = MessageStatusReplayed
			got, err = scanMessageStatus(tx.QueryRowContext(ctx, l.query("MessageStatusGet"), r.Provider, r.MessageID))
			return err
		}
		if err != nil {
			return fmt.Errorf("error logging the callback: %w", err)
		}

		got, err = scanMessageStatus(tx.QueryRowContext(ctx, l.query("MessageStatusInsert"),
			r.Provider, r.MessageID, string(r.Status), textArg(r.ErrorCode), textArg(r.Recipient)))
		if err == nil {
			outcome = MessageStatusRecorded
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("error inserting the status: %w", err)
		}
		if got, err = scanMessageStatus(tx.QueryRowContext(ctx, l.query("MessageStatusGetForUpdate"), r.Provider, r.MessageID)); err != nil {
			return fmt.Errorf("error locking the status: %w", err)
		}
		if !r.Status.Supersedes(got.Status) {
			outcome = MessageStatusStale
			return nil
		}
		got, err = scanMessageStatus(tx.QueryRowContext(ctx, l.query("MessageStatusUpdate"),
			r.Provider, r.MessageID, string(r.Status), textArg(r.ErrorCode), textArg(r.Recipient)))
		if err != nil {
			return fmt.Errorf("error updating the status: %w", err)
		}
		outcome = MessageStatusAdvanced
		return nil
	})
	if err != nil {
		return MessageStatus{}, "", fmt.Errorf("error recording status %q of message %q: %w", r.Status, r.MessageID, err)
	}
	return got, outcome, nil
}

func (l *ledger) MessageStatusGet(ctx context.Context, provider, messageID string) (MessageStatus, error) {
	m, err := scanMessageStatus(l.conn.QueryRowContext(ctx, l.query("MessageStatusGet"), provider, messageID))
	if err != nil {
		return MessageStatus{}, fmt.Errorf("error reading status of message %q: %w", messageID, notFound(err))
	}
	return m, nil
}

func (l *ledger) MessageStatusListBySession(ctx context.Context, sessionID string) ([]EffectMessage, error) {
	out, err := queryAll(ctx, l.conn, scanEffectMessage, l.query("MessageStatusListBySession"), sessionID)
	if err != nil {
		return nil, fmt.Errorf("error listing message statuses of session %q: %w", sessionID, err)
	}
	return out, nil
}

func (l *ledger) MessageStatusListFailed(ctx context.Context, limit int) ([]EffectMessage, error) {
	out, err := queryAll(ctx, l.conn, scanEffectMessage, l.query("MessageStatusListFailed"), listLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("error listing failed messages: %w", err)
	}
	return out, nil
}

func messageStatusDest(m *MessageStatus) []any {
	return []any{
		&m.Provider,
		&m.MessageID,
		&m.Status,
		textCol{&m.Recipient},
		textCol{&m.ErrorCode},
		timeCol{&m.CreatedAt},
		timeCol{&m.UpdatedAt},
	}
}

func scanMessageStatus(row rowScanner) (MessageStatus, error) {
	var m MessageStatus
	err := row.Scan(messageStatusDest(&m)...)
	return m, err
}

func scanEffectMessage(row rowScanner) (EffectMessage, error) {
	var em EffectMessage
	eff, err := scanEffect(row, messageStatusDest(&em.Message)...)
	em.Effect = eff
	return em, err
}
