package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/maestrotype"
)

// Admission is what InvocationAdmit recorded.
type Admission struct {
	Invocation Invocation
	// Created is false when the key was recorded before: Invocation is the
	// row already there and nothing was written.
	Created bool
	// Approval is the request opened with a new call, nil when no opener
	// was given or the call was not new.
	Approval *ApprovalRequest
}

// ApprovalOpener builds the approval request of a call just recorded, from
// the session's calls as the recording transaction sees them (the new call
// among them; none when the call has no session).
type ApprovalOpener func(inv Invocation, sessionCalls []Invocation) (ApprovalRequest, error)

// InvocationAdmit records inv under its key in one transaction: the cap
// check of InvocationInsertCapped, the insert, and, for a new call with an
// opener, its approval request and the request's events. A key already
// recorded is answered with its row whatever the count, and opens nothing.
func (l *ledger) InvocationAdmit(ctx context.Context, inv Invocation, maxOpen int, open ApprovalOpener) (Admission, error) {
	return l.invocationAdmit(ctx, inv, maxOpen, nil, open)
}

// InvocationAdmitInSession is InvocationAdmit that first reads the call's
// session in the same transaction and hands it to check: an error check
// returns ends the admission with nothing recorded, as does a session not
// recorded (ErrNotFound). Admission's read of the session and its write
// are then one transaction.
func (l *ledger) InvocationAdmitInSession(ctx context.Context, inv Invocation, maxOpen int, check func(SessionAtAdmission) error, open ApprovalOpener) (Admission, error) {
	if check == nil {
		return Admission{}, errors.New("error recording invocation: a session check is required")
	}
	return l.invocationAdmit(ctx, inv, maxOpen, check, open)
}

func (l *ledger) invocationAdmit(ctx context.Context, inv Invocation, maxOpen int, check func(SessionAtAdmission) error, open ApprovalOpener) (Admission, error) {
	capped := maxOpen > 0 && inv.State == maestrotype.InvocationAwaitingApproval
	if !capped && open == nil && check == nil {
		// One statement needs no transaction: BEGIN and COMMIT would each
		// cost a round trip.
		got, created, err := l.invocationInsert(ctx, l.conn, inv)
		if err != nil {
			return Admission{}, err
		}
		return Admission{Invocation: got, Created: created}, nil
	}
	inv.ID = idOr(inv.ID, "inv")
	if l.name == dialectPostgres {
		return l.invocationAdmitPipelined(ctx, inv, maxOpen, capped, check, open)
	}
	var out Admission
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		out = Admission{}
		if check != nil {
			sess, err := scanSessionAtAdmission(tx.QueryRowContext(ctx, l.query("SessionGetForAdmission"), inv.SessionID))
			if err != nil {
				return fmt.Errorf("error getting session %q: %w", inv.SessionID, notFound(err))
			}
			if err := check(sess); err != nil {
				return err
			}
		}
		insert, args := "InvocationInsert", invocationArgs(inv)
		if capped {
			if _, err := tx.ExecContext(ctx, l.query("AgentCapLock"), capLockKey(inv.AgentID)); err != nil {
				return fmt.Errorf("error taking the agent's %s lock: %w", CapOpenApprovals, err)
			}
			insert, args = "InvocationInsertUnderCap", append(args, maxOpen)
		}
		got, err := scanInvocation(tx.QueryRowContext(ctx, l.query(insert), args...))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			out.Invocation, err = l.admitMissed(func(query string, args ...any) rowScanner {
				return tx.QueryRowContext(ctx, query, args...)
			}, inv, maxOpen, capped)
			return err
		case err != nil:
			return fmt.Errorf("error inserting invocation: %w", err)
		}
		out.Invocation, out.Created = got, true
		if open == nil {
			return nil
		}
		var calls []Invocation
		if got.SessionID != "" {
			if calls, err = queryAll(ctx, tx, scanInvocation, l.query("InvocationListBySession"), got.SessionID); err != nil {
				return fmt.Errorf("error listing the session's calls: %w", err)
			}
		}
		req, err := open(got, calls)
		if err != nil {
			return err
		}
		apr, err := l.approvalRequestInsert(ctx, tx, req)
		if err != nil {
			return err
		}
		out.Approval = &apr
		return nil
	})
	if err != nil {
		return Admission{}, err
	}
	return out, nil
}

// capLockKey names the agent's open-approvals cap lock.
func capLockKey(agentID string) string { return string(CapOpenApprovals) + ":" + agentID }

// admitMissed explains an admission insert that inserted nothing: the key
// was taken, and its row is answered whatever the count (the same call
// sent again, or twice at once: the cap lock orders it after the other
// send's commit); or the cap was reached, refused with a *CapError.
// queryRow runs one statement in the admission's transaction.
func (l *ledger) admitMissed(queryRow func(query string, args ...any) rowScanner, inv Invocation, maxOpen int, capped bool) (Invocation, error) {
	got, err := scanInvocation(queryRow(l.query("InvocationGetByKey"), inv.OperationKey))
	switch {
	case err == nil:
		return got, nil
	case !errors.Is(err, sql.ErrNoRows) || !capped:
		return Invocation{}, fmt.Errorf("error getting invocation by key %q: %w", inv.OperationKey, notFound(err))
	}
	var held int
	if err := queryRow(l.query("ApprovalCountOpen"), inv.AgentID).Scan(&held); err != nil {
		return Invocation{}, fmt.Errorf("error counting the agent's %s: %w", CapOpenApprovals, err)
	}
	// The insert saw the cap reached; a decision since may have freed a
	// place, which the next call takes.
	return Invocation{}, &CapError{Cap: CapOpenApprovals, AgentID: inv.AgentID, Limit: maxOpen, Held: max(held, maxOpen)}
}

// InvocationInsertInSession records inv only if its session is its agent's,
// active and not being rolled back, checked by the insert itself, so a
// call in a session admission already knows costs one statement. ok is
// false when nothing was inserted: the key was taken, or the session is
// missing or does not pass; the caller then reads both.
func (l *ledger) InvocationInsertInSession(ctx context.Context, inv Invocation) (got Invocation, ok bool, err error) {
	got, err = scanInvocation(l.conn.QueryRowContext(ctx, l.query("InvocationInsertInSession"), invocationArgs(inv)...))
	switch {
	case err == nil:
		return got, true, nil
	case errors.Is(err, sql.ErrNoRows):
		return Invocation{}, false, nil
	}
	return Invocation{}, false, fmt.Errorf("error inserting invocation: %w", err)
}
