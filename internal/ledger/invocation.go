package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/maestrotype"
)

func (l *ledger) InvocationInsert(ctx context.Context, inv Invocation) (Invocation, bool, error) {
	return l.invocationInsert(ctx, l.conn, inv)
}

func (l *ledger) invocationInsert(ctx context.Context, q querier, inv Invocation) (Invocation, bool, error) {
	got, err := scanInvocation(q.QueryRowContext(ctx, l.query("InvocationInsert"), invocationArgs(inv)...))
	switch {
	case err == nil:
		return got, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return Invocation{}, false, fmt.Errorf("error inserting invocation: %w", err)
	}
	// The key was taken. ON CONFLICT waited for the row's writer to commit,
	// so the row is visible to this next statement, read where the insert
	// ran so a transaction holding the only connection reads it too.
	got, err = scanInvocation(q.QueryRowContext(ctx, l.query("InvocationGetByKey"), inv.OperationKey))
	if err != nil {
		return Invocation{}, false, fmt.Errorf("error getting invocation by key %q: %w", inv.OperationKey, notFound(err))
	}
	return got, false, nil
}

// invocationArgs are the arguments of InvocationInsert and the inserts
// like it, $1 to $13.
func invocationArgs(inv Invocation) []any {
	return []any{
		idOr(inv.ID, "inv"),
		inv.OperationKey,
		textArg(inv.SessionID),
		textArg(inv.AgentID),
		inv.Tool,
		rawJSONArg(inv.Args),
		inv.ArgsHash,
		string(inv.Route),
		string(inv.State),
		textArg(inv.WorkflowID),
		textArg(inv.ToolCallID),
		textArg(string(inv.EffectClass)),
		textArg(inv.CatalogVersion),
	}
}

func (l *ledger) InvocationGet(ctx context.Context, id string) (Invocation, error) {
	inv, err := scanInvocation(l.conn.QueryRowContext(ctx, l.query("InvocationGet"), id))
	if err != nil {
		return Invocation{}, fmt.Errorf("error getting invocation %q: %w", id, notFound(err))
	}
	return inv, nil
}

func (l *ledger) InvocationGetByKey(ctx context.Context, operationKey string) (Invocation, error) {
	inv, err := scanInvocation(l.conn.QueryRowContext(ctx, l.query("InvocationGetByKey"), operationKey))
	if err != nil {
		return Invocation{}, fmt.Errorf("error getting invocation by key %q: %w", operationKey, notFound(err))
	}
	return inv, nil
}

func (l *ledger) InvocationAnswerPart(ctx context.Context, id string, obs maestrotype.Observation) error {
	obsArg, err := jsonArg(&obs)
	if err != nil {
		return fmt.Errorf("error recording the partial answer of invocation %q: %w", id, err)
	}
	res, err := l.db.ExecContext(ctx, l.query("InvocationAnswerPart"), id, obsArg)
	if err == nil {
		err = expectOne(res, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("error recording the partial answer of invocation %q: %w", id, err)
	}
	return nil
}

func (l *ledger) InvocationSetState(ctx context.Context, id string, state maestrotype.InvocationState) error {
	res, err := l.db.ExecContext(ctx, l.query("InvocationSetState"), id, string(state))
	if err == nil {
		err = expectOne(res, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("error setting state of invocation %q: %w", id, err)
	}
	return nil
}

func (l *ledger) InvocationListBySession(ctx context.Context, sessionID string) ([]Invocation, error) {
	invs, err := queryAll(ctx, l.conn, scanInvocation, l.query("InvocationListBySession"), sessionID)
	if err != nil {
		return nil, fmt.Errorf("error listing invocations of session %q: %w", sessionID, err)
	}
	return invs, nil
}

func scanInvocation(row rowScanner) (Invocation, error) {
	var inv Invocation
	err := row.Scan(invocationDest(&inv)...)
	return inv, err
}

// invocationDest is where each column of an invocation row is scanned, in
// the order every invocation query selects them.
func invocationDest(inv *Invocation) []any {
	return []any{
		&inv.ID,
		&inv.OperationKey,
		textCol{&inv.SessionID},
		textCol{&inv.AgentID},
		&inv.Tool,
		rawJSONCol{&inv.Args},
		&inv.ArgsHash,
		&inv.Route,
		&inv.State,
		jsonCol[*maestrotype.Observation]{&inv.Observation},
		textCol{&inv.WorkflowID},
		timeCol{&inv.CreatedAt},
		timeCol{&inv.UpdatedAt},
		textCol{&inv.ToolCallID},
		textCol{(*string)(&inv.EffectClass)},
		textCol{&inv.CatalogVersion},
	}
}

// notFound maps "no row" to ErrNotFound and leaves other errors alone.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
