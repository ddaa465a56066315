package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/maestrotype"
)

// ErrCapReached is returned when opening something would take an agent past
// a cap the catalog sets on what it may hold open at once. Errors carrying
// it are *CapError.
var ErrCapReached = errors.New("agent cap reached")

// Cap names what a cap bounds.
type Cap string

const (
	// CapOpenApprovals bounds an agent's approval requests waiting for a
	// human: its gated calls awaiting approval whose request, if opened
	// yet, is still pending.
	CapOpenApprovals Cap = "open_approvals"
	// CapLiveSessions bounds an agent's sessions not yet ended.
	CapLiveSessions Cap = "live_sessions"
)

// CapError says which cap refused the write, its value and how many the
// agent holds.
type CapError struct {
	Cap     Cap
	AgentID string
	Limit   int
	Held    int
}

func (e *CapError) Error() string {
	return fmt.Sprintf("agent %s holds %d %s, its cap is %d", e.AgentID, e.Held, e.Cap, e.Limit)
}

func (e *CapError) Unwrap() error { return ErrCapReached }

// capped runs write in a transaction that holds the agent's cap lock, after
// counting what the agent holds with countQuery: of any number of
// concurrent writers for one agent, on any process sharing the ledger, each
// counts what the ones before it committed, so a burst cannot overshoot
// the cap. A limit of zero or less is no cap.
func (l *ledger) capped(ctx context.Context, c Cap, agentID string, limit int, countQuery string, write func(tx *sql.Tx) error) error {
	return l.withTx(ctx, func(tx *sql.Tx) error {
		if limit > 0 {
			if _, err := tx.ExecContext(ctx, l.query("AgentCapLock"), string(c)+":"+agentID); err != nil {
				return fmt.Errorf("error taking the agent's %s lock: %w", c, err)
			}
			var held int
			if err := tx.QueryRowContext(ctx, l.query(countQuery), agentID).Scan(&held); err != nil {
				return fmt.Errorf("error counting the agent's %s: %w", c, err)
			}
			if held >= limit {
				return &CapError{Cap: c, AgentID: agentID, Limit: limit, Held: held}
			}
		}
		return write(tx)
	})
}

// SessionUpsertCapped is SessionUpsert that refuses, with a *CapError, to
// create a session when the agent already has maxLive sessions not ended.
// A session that exists is returned as SessionUpsert returns it, whatever
// the count: the cap bounds new sessions only. maxLive of zero or less is
// no cap.
func (l *ledger) SessionUpsertCapped(ctx context.Context, s Session, maxLive int) (Session, error) {
	return l.sessionUpsert(ctx, s, maxLive)
}

// InvocationInsertCapped is InvocationInsert that refuses, with a
// *CapError, to record a new call awaiting approval when the agent already
// holds maxOpen approval requests open (CapOpenApprovals). A call re-sent
// under a key already recorded is answered as InvocationInsert answers it,
// whatever the count. maxOpen of zero or less is no cap.
func (l *ledger) InvocationInsertCapped(ctx context.Context, inv Invocation, maxOpen int) (Invocation, bool, error) {
	if maxOpen <= 0 || inv.State != maestrotype.InvocationAwaitingApproval {
		return l.InvocationInsert(ctx, inv)
	}
	switch got, err := l.InvocationGetByKey(ctx, inv.OperationKey); {
	case err == nil:
		return got, false, nil
	case !errors.Is(err, ErrNotFound):
		return Invocation{}, false, fmt.Errorf("error inserting invocation: %w", err)
	}
	var (
		got     Invocation
		created bool
	)
	err := l.capped(ctx, CapOpenApprovals, inv.AgentID, maxOpen, "ApprovalCountOpen", func(tx *sql.Tx) error {
		var err error
		got, created, err = l.invocationInsert(ctx, tx, inv)
		return err
	})
	var capErr *CapError
	if errors.As(err, &capErr) {
		// The same call, sent twice at once, may have been recorded by the
		// other send meanwhile: it is answered, not refused.
		if got, gerr := l.InvocationGetByKey(ctx, inv.OperationKey); gerr == nil {
			return got, false, nil
		}
	}
	if err != nil {
		return Invocation{}, false, err
	}
	return got, created, nil
}
