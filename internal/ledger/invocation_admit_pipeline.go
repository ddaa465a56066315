package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// invocationAdmitPipelined is InvocationAdmit's transaction on PostgreSQL
// in two round trips rather than one per statement: BEGIN, the cap lock,
// the insert (which counts under the lock) and the session's calls go in
// one pipeline; the approval request, its events and COMMIT in a second,
// once the request is built from what the first returned. Statements of a
// pipeline run in order, each after the one before it, so the count still
// sees every commit of the writers the lock made it wait for.
func (l *ledger) invocationAdmitPipelined(ctx context.Context, inv Invocation, maxOpen int, capped bool, check func(SessionAtAdmission) error, open ApprovalOpener) (Admission, error) {
	var out Admission
	ran, err := l.onPgxConn(ctx, func(pc *pgx.Conn) error {
		var err error
		out, err = l.admitOn(ctx, pc, inv, maxOpen, capped, check, open)
		return err
	})
	switch {
	case err != nil:
		return Admission{}, err
	case !ran:
		return Admission{}, errors.New("error recording invocation: the PostgreSQL driver is not pgx")
	}
	return out, nil
}

func (l *ledger) admitOn(ctx context.Context, pc *pgx.Conn, inv Invocation, maxOpen int, capped bool, check func(SessionAtAdmission) error, open ApprovalOpener) (Admission, error) {
	insert, args := "InvocationInsert", invocationArgs(inv)
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	// The session is read before the insert and checked once the pipeline
	// returns: a session that refuses the call rolls the insert back.
	if check != nil {
		b.Queue(l.query("SessionGetForAdmission"), inv.SessionID)
	}
	if capped {
		b.Queue(l.query("AgentCapLock"), capLockKey(inv.AgentID))
		insert, args = "InvocationInsertUnderCap", append(args, maxOpen)
	}
	b.Queue(l.query(insert), args...)
	listed := open != nil && inv.SessionID != ""
	if listed {
		b.Queue(l.query("InvocationListBySession"), inv.SessionID)
	}
	sess, got, created, calls, err := readAdmitBatch(pc.SendBatch(ctx, b), check != nil, capped, listed)
	if err != nil {
		return Admission{}, err
	}
	if check != nil {
		if err := check(sess); err != nil {
			return Admission{}, err
		}
	}
	queryRow := func(query string, args ...any) rowScanner { return pc.QueryRow(ctx, query, args...) }
	if !created {
		existing, err := l.admitMissed(queryRow, inv, maxOpen, capped)
		if err != nil {
			return Admission{}, err
		}
		if _, err := pc.Exec(ctx, "COMMIT"); err != nil {
			return Admission{}, fmt.Errorf("error committing transaction: %w", err)
		}
		return Admission{Invocation: existing}, nil
	}
	out := Admission{Invocation: got, Created: true}
	if open == nil {
		if _, err := pc.Exec(ctx, "COMMIT"); err != nil {
			return Admission{}, fmt.Errorf("error committing transaction: %w", err)
		}
		return out, nil
	}
	req, err := open(got, calls)
	if err != nil {
		return Admission{}, err
	}
	req, reqArgs, err := l.approvalInsertArgs(req)
	if err != nil {
		return Admission{}, err
	}
	events := openedEvents(req)
	b = &pgx.Batch{}
	b.Queue(l.query("ApprovalRequestInsert"), reqArgs...)
	for _, e := range events {
		if e.Actor == "" {
			return Admission{}, fmt.Errorf("error appending %s event: actor is required", e.Kind)
		}
		b.Queue(l.query("ApprovalEventInsert"), e.ApprovalID, string(e.Kind), e.Actor,
			textArg(e.ArgsHashBefore), textArg(e.ArgsHashAfter), rawJSONArg(e.Detail))
	}
	b.Queue("COMMIT")
	apr, inserted, err := readOpenBatch(pc.SendBatch(ctx, b), len(events))
	if err != nil {
		return Admission{}, err
	}
	if !inserted {
		// The key already had a request, whose events were logged when it
		// was inserted; ours inserted none, as they select from our
		// request. The transaction is committed: read it as it stands.
		if apr, err = scanApproval(queryRow(l.query("ApprovalRequestGetByKey"), req.OperationKey)); err != nil {
			return Admission{}, fmt.Errorf("error getting approval request by key %q: %w", req.OperationKey, notFound(err))
		}
	} else {
		apr.DecisionDetail = req.DecisionDetail
	}
	out.Approval = &apr
	return out, nil
}

// readAdmitBatch reads the first pipeline's results, in the order queued,
// and closes it.
func readAdmitBatch(br pgx.BatchResults, session, capped, listed bool) (sess SessionAtAdmission, got Invocation, created bool, calls []Invocation, err error) {
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("error recording invocation: %w", cerr)
		}
	}()
	if _, err := br.Exec(); err != nil {
		return SessionAtAdmission{}, Invocation{}, false, nil, fmt.Errorf("error beginning transaction: %w", err)
	}
	if session {
		if sess, err = scanSessionAtAdmission(br.QueryRow()); err != nil {
			return SessionAtAdmission{}, Invocation{}, false, nil, fmt.Errorf("error getting session: %w", notFound(err))
		}
	}
	if capped {
		if _, err := br.Exec(); err != nil {
			return SessionAtAdmission{}, Invocation{}, false, nil, fmt.Errorf("error taking the agent's %s lock: %w", CapOpenApprovals, err)
		}
	}
	got, err = scanInvocation(br.QueryRow())
	switch {
	case err == nil:
		created = true
	case !errors.Is(err, sql.ErrNoRows):
		return SessionAtAdmission{}, Invocation{}, false, nil, fmt.Errorf("error inserting invocation: %w", err)
	}
	if listed {
		rows, err := br.Query()
		if err != nil {
			return SessionAtAdmission{}, Invocation{}, false, nil, fmt.Errorf("error listing the session's calls: %w", err)
		}
		defer rows.Close()
		calls = []Invocation{}
		for rows.Next() {
			inv, err := scanInvocation(rows)
			if err != nil {
				return SessionAtAdmission{}, Invocation{}, false, nil, fmt.Errorf("error listing the session's calls: %w", err)
			}
			calls = append(calls, inv)
		}
		if err := rows.Err(); err != nil {
			return SessionAtAdmission{}, Invocation{}, false, nil, fmt.Errorf("error listing the session's calls: %w", err)
		}
	}
	return sess, got, created, calls, nil
}

// readOpenBatch reads the second pipeline's results and closes it:
// inserted is false when the request's key already had one.
func readOpenBatch(br pgx.BatchResults, events int) (apr ApprovalRequest, inserted bool, err error) {
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("error inserting approval request: %w", cerr)
		}
	}()
	apr, err = scanApproval(br.QueryRow())
	switch {
	case err == nil:
		inserted = true
	case !errors.Is(err, sql.ErrNoRows):
		return ApprovalRequest{}, false, fmt.Errorf("error inserting approval request: %w", err)
	}
	for range events {
		_, err := scanApprovalEvent(br.QueryRow())
		if err != nil && (inserted || !errors.Is(err, sql.ErrNoRows)) {
			return ApprovalRequest{}, false, fmt.Errorf("error inserting approval request: %w", notFound(err))
		}
	}
	if _, err := br.Exec(); err != nil {
		return ApprovalRequest{}, false, fmt.Errorf("error committing transaction: %w", err)
	}
	return apr, inserted, nil
}
