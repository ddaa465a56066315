package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// FinishedInvocation is an invocation as the write that recorded its
// outcome left it, so whoever answers for it in this process need not read
// it back.
type FinishedInvocation struct {
	Invocation Invocation
	// RollingBack reports whether InvocationFinishParams.RollingBack was the
	// observation recorded.
	RollingBack bool
	// Message is the latest status InvocationFinishParams.MessageProvider
	// had reported for the message the recorded receipt names, as the write
	// saw it; nil when it names none, none was reported or none was asked
	// for (MessageRead false).
	Message     *MessageStatus
	MessageRead bool
	// StateReads are the effect's reads as the settle left them; nil
	// unless the settle recorded an after read (EffectSettleParams.AfterRead).
	StateReads *EffectStateReads
}

func (l *ledger) InvocationFinish(ctx context.Context, id string, state maestrotype.InvocationState, obs maestrotype.Observation) error {
	_, err := l.InvocationFinishRow(ctx, id, state, obs)
	return err
}

func (l *ledger) InvocationFinishRow(ctx context.Context, id string, state maestrotype.InvocationState, obs maestrotype.Observation) (Invocation, error) {
	if !state.Terminal() {
		return Invocation{}, fmt.Errorf("error finishing invocation %q: state %q is not final", id, state)
	}
	obsArg, err := jsonArg(&obs)
	if err != nil {
		return Invocation{}, fmt.Errorf("error finishing invocation %q: %w", id, err)
	}
	inv, err := scanInvocation(l.db.QueryRowContext(ctx, l.query("InvocationFinish"), id, string(state), obsArg))
	if err != nil {
		return Invocation{}, fmt.Errorf("error finishing invocation %q: %w", id, notFound(err))
	}
	return inv, nil
}

// scanSettleFinish scans EffectSettleFinishCTE's row: whether the effect
// settled, whether the rolling-back observation was recorded, then the
// effect's state reads (kept when withReads), the finished invocation and
// the status of the message its receipt names, each NULL when there is
// none.
func scanSettleFinish(row rowScanner, provider string, withReads bool) (settled bool, fin FinishedInvocation, err error) {
	var (
		m                MessageStatus
		created, updated *time.Time
		reads            EffectStateReads
	)
	dest := []any{&settled, &fin.RollingBack,
		orNull{&reads.OperationKey}, jsonCol[*maestrotype.StateRead]{&reads.Before}, jsonCol[*maestrotype.StateRead]{&reads.After}}
	for _, d := range invocationDest(&fin.Invocation) {
		dest = append(dest, orNull{d})
	}
	dest = append(dest, optionalMessageDest(&m, &created, &updated)...)
	if err := row.Scan(dest...); err != nil {
		return false, FinishedInvocation{}, err
	}
	fin.MessageRead = provider != ""
	fin.Message = optionalMessage(m, created, updated)
	if withReads && settled {
		fin.StateReads = &reads
	}
	return settled, fin, nil
}

// messageOfFinished reads, in the transaction that finished inv, the
// status provider reported for the message its receipt names: what the
// one statement reads on PostgreSQL.
func (l *ledger) messageOfFinished(ctx context.Context, tx *sql.Tx, fin *FinishedInvocation, provider string) error {
	if provider == "" {
		return nil
	}
	fin.MessageRead = true
	obs := fin.Invocation.Observation
	if obs == nil || obs.Receipt == nil || obs.Receipt.Fields[maestrotype.ReceiptMessageSID] == "" {
		return nil
	}
	m, err := scanMessageStatus(tx.QueryRowContext(ctx, l.query("MessageStatusGet"), provider, obs.Receipt.Fields[maestrotype.ReceiptMessageSID]))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("error reading the status of the finished invocation's message: %w", err)
	}
	fin.Message = &m
	return nil
}

// optionalMessageDest scans a message status a LEFT JOIN may not have
// found; optionalMessage makes it nil then.
func optionalMessageDest(m *MessageStatus, created, updated **time.Time) []any {
	return []any{
		textCol{&m.Provider},
		textCol{&m.MessageID},
		textCol{(*string)(&m.Status)},
		textCol{&m.Recipient},
		textCol{&m.ErrorCode},
		nullTimeCol{created},
		nullTimeCol{updated},
	}
}

func optionalMessage(m MessageStatus, created, updated *time.Time) *MessageStatus {
	if m.MessageID == "" {
		return nil
	}
	if created != nil {
		m.CreatedAt = *created
	}
	if updated != nil {
		m.UpdatedAt = *updated
	}
	return &m
}

// orNull scans a column a LEFT JOIN may have left NULL, leaving its
// destination as it was then.
type orNull struct{ dst any }

func (c orNull) Scan(src any) error {
	if src == nil {
		return nil
	}
	switch d := c.dst.(type) {
	case sql.Scanner:
		return d.Scan(src)
	case *string:
		return textCol{d}.Scan(src)
	case *maestrotype.Route:
		return textCol{(*string)(d)}.Scan(src)
	case *maestrotype.InvocationState:
		return textCol{(*string)(d)}.Scan(src)
	}
	return fmt.Errorf("cannot scan %T into %T", src, c.dst)
}
