package ledger

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
	entries, err := queryAll(ctx, l.conn, scanUndo, l.query("UndoListBySession"), sessionID)
	if err != nil {
		return nil, fmt.Errorf("error listing undo entries of session %q: %w", sessionID, err)
	}
	return entries, nil
}

func (l *ledger) UndoGet(ctx context.Context, id string) (UndoEntry, error) {
	u, err := scanUndo(l.conn.QueryRowContext(ctx, l.query("UndoGet"), id))
	if err != nil {
		return UndoEntry{}, fmt.Errorf("error getting undo entry %q: %w", id, notFound(err))
	}
	return u, nil
}

func (l *ledger) UndoSetStatus(ctx context.Context, id string, to UndoStatus, detail string) (UndoEntry, error) {
	switch to {
	case UndoCompensated, UndoSkipped, UndoFailed:
	case UndoPending:
		if detail == "" {
			return UndoEntry{}, fmt.Errorf("error holding undo entry %q: a held entry says why", id)
		}
	default:
		return UndoEntry{}, fmt.Errorf("error setting status of undo entry %q: %q is not how a compensation settles", id, to)
	}
	u, moved, err := transition(ctx, l, scanUndo, "UndoGetForUpdate", "UndoSetStatus", id, string(to), textArg(detail))
	if err != nil {
		return UndoEntry{}, fmt.Errorf("error setting status of undo entry %q: %w", id, err)
	}
	if !moved {
		return u, fmt.Errorf("error setting status of undo entry %q: it is %s, so it cannot become %s: %w", id, u.Status, to, ErrUndoTransition)
	}
	return u, nil
}

func scanUndo(row rowScanner) (UndoEntry, error) {
	var u UndoEntry
	err := row.Scan(undoDest(&u)...)
	return u, err
}

// undoDest are the scan destinations of an undo entry's columns.
func undoDest(u *UndoEntry) []any {
	return []any{
		&u.ID,
		&u.SessionID,
		&u.OperationKey,
		&u.Seq,
		&u.CompensationTool,
		textCol{&u.CompensationVersion},
		rawJSONCol{&u.ArgsSnapshot},
		&u.Status,
		textCol{&u.Detail},
		timeCol{&u.CreatedAt},
		timeCol{&u.UpdatedAt},
	}
}
