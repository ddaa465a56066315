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
	capped := maxOpen > 0 && inv.State == maestrotype.InvocationAwaitingApproval
	if !capped && open == nil {
		// One statement needs no transaction: BEGIN and COMMIT would each
		// cost a round trip.
		got, created, err := l.invocationInsert(ctx, l.conn, inv)
		if err != nil {
			return Admission{}, err
		}
		return Admission{Invocation: got, Created: created}, nil
	}
	var out Admission
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		out = Admission{}
		if capped {
			existing, err := l.overCap(ctx, tx, inv, maxOpen)
			if err != nil || existing != nil {
				if existing != nil {
					out.Invocation = *existing
				}
				return err
			}
		}
		got, created, err := l.invocationInsert(ctx, tx, inv)
		if err != nil {
			return err
		}
		out.Invocation, out.Created = got, created
		if !created || open == nil {
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

// overCap takes the agent's open-approvals lock and counts what it holds.
// Past the cap, a key already recorded is returned to be answered (the
// same call sent again, or twice at once: the lock orders it after the
// other send's commit); a new one is refused with a *CapError.
func (l *ledger) overCap(ctx context.Context, tx *sql.Tx, inv Invocation, maxOpen int) (*Invocation, error) {
	if _, err := tx.ExecContext(ctx, l.query("AgentCapLock"), string(CapOpenApprovals)+":"+inv.AgentID); err != nil {
		return nil, fmt.Errorf("error taking the agent's %s lock: %w", CapOpenApprovals, err)
	}
	var held int
	if err := tx.QueryRowContext(ctx, l.query("ApprovalCountOpen"), inv.AgentID).Scan(&held); err != nil {
		return nil, fmt.Errorf("error counting the agent's %s: %w", CapOpenApprovals, err)
	}
	if held < maxOpen {
		return nil, nil
	}
	got, err := scanInvocation(tx.QueryRowContext(ctx, l.query("InvocationGetByKey"), inv.OperationKey))
	switch {
	case err == nil:
		return &got, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("error getting invocation by key %q: %w", inv.OperationKey, err)
	}
	return nil, &CapError{Cap: CapOpenApprovals, AgentID: inv.AgentID, Limit: maxOpen, Held: held}
}

// InvocationInsertInSession records inv only if its session is its agent's,
// active and not being rolled back, checked by the insert itself, so a
// call in a session admission already knows costs one statement. ok is
// false when nothing was inserted: the key was taken, or the session is
// missing or does not pass; the caller then reads both.
func (l *ledger) InvocationInsertInSession(ctx context.Context, inv Invocation) (got Invocation, ok bool, err error) {
	got, err = scanInvocation(l.conn.QueryRowContext(ctx, l.query("InvocationInsertInSession"),
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
	))
	switch {
	case err == nil:
		return got, true, nil
	case errors.Is(err, sql.ErrNoRows):
		return Invocation{}, false, nil
	}
	return Invocation{}, false, fmt.Errorf("error inserting invocation: %w", err)
}
