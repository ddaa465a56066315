package ledger

import (
	"context"
	"fmt"
)

func (l *ledger) RefusalInsert(ctx context.Context, r Refusal) error {
	_, err := l.db.ExecContext(ctx, l.query("RefusalInsert"),
		textArg(r.AgentID),
		textArg(r.SessionID),
		textArg(r.Tool),
		textArg(r.OperationKey),
		string(r.Code),
		textArg(r.Detail),
	)
	if err != nil {
		return fmt.Errorf("error inserting refusal: %w", err)
	}
	return nil
}

func (l *ledger) RefusalList(ctx context.Context, limit int) ([]Refusal, error) {
	refusals, err := queryAll(ctx, l.conn, scanRefusal, l.query("RefusalList"), listLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("error listing refusals: %w", err)
	}
	return refusals, nil
}

func scanRefusal(row rowScanner) (Refusal, error) {
	var r Refusal
	err := row.Scan(
		&r.ID,
		textCol{&r.AgentID},
		textCol{&r.SessionID},
		textCol{&r.Tool},
		textCol{&r.OperationKey},
		&r.Code,
		textCol{&r.Detail},
		timeCol{&r.CreatedAt},
	)
	return r, err
}
