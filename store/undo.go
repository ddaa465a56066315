package store

import (
	"context"
	"fmt"
)

// undoPush writes an undo entry inside the transaction that claims its
// effect; EffectClaim is the only way in, so no effect exists without its
// compensation.
func (l *ledger) undoPush(ctx context.Context, tx querier, operationKey string, u UndoEntry) (UndoEntry, error) {
	got, err := scanUndo(tx.QueryRowContext(ctx, l.query("UndoInsert"),
		idOr(u.ID, "undo"),
		u.SessionID,
		operationKey,
		u.CompensationTool,
		textArg(u.CompensationVersion),
		rawJSONArg(u.ArgsSnapshot),
	))
	if err != nil {
		return UndoEntry{}, fmt.Errorf("error pushing undo entry: %w", err)
	}
	return got, nil
}

func (l *ledger) UndoListBySession(ctx context.Context, sessionID string) ([]UndoEntry, error) {
	entries, err := queryAll(ctx, l.db, scanUndo, l.query("UndoListBySession"), sessionID)
	if err != nil {
		return nil, fmt.Errorf("error listing undo entries of session %q: %w", sessionID, err)
	}
	return entries, nil
}

func scanUndo(row rowScanner) (UndoEntry, error) {
	var u UndoEntry
	err := row.Scan(
		&u.ID,
		&u.SessionID,
		&u.OperationKey,
		&u.Seq,
		&u.CompensationTool,
		textCol{&u.CompensationVersion},
		rawJSONCol{&u.ArgsSnapshot},
		&u.Status,
		timeCol{&u.CreatedAt},
		timeCol{&u.UpdatedAt},
	)
	return u, err
}
