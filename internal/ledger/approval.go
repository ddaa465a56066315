package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

func (l *ledger) ApprovalRequestInsert(ctx context.Context, a ApprovalRequest) (ApprovalRequest, error) {
	var got ApprovalRequest
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		got, err = l.approvalRequestInsert(ctx, tx, a)
		return err
	})
	if err != nil {
		return ApprovalRequest{}, err
	}
	return got, nil
}

// approvalRequestInsert is ApprovalRequestInsert within tx, so a request
// can open in the transaction that records its call.
func (l *ledger) approvalRequestInsert(ctx context.Context, tx *sql.Tx, a ApprovalRequest) (ApprovalRequest, error) {
	a, args, err := l.approvalInsertArgs(a)
	if err != nil {
		return ApprovalRequest{}, err
	}
	inserted, err := scanApproval(tx.QueryRowContext(ctx, l.query("ApprovalRequestInsert"), args...))
	switch {
	case err == nil:
		inserted.DecisionDetail = a.DecisionDetail
		if err := l.logOpened(ctx, tx, inserted); err != nil {
			return ApprovalRequest{}, err
		}
		return inserted, nil
	case !errors.Is(err, sql.ErrNoRows):
		return ApprovalRequest{}, fmt.Errorf("error inserting approval request: %w", err)
	}
	// The key already has a request; ON CONFLICT waited for its writer
	// to commit, so the row is visible now. Its events were logged when
	// it was inserted.
	got, err := scanApproval(tx.QueryRowContext(ctx, l.query("ApprovalRequestGetByKey"), a.OperationKey))
	if err != nil {
		return ApprovalRequest{}, fmt.Errorf("error getting approval request by key %q: %w", a.OperationKey, notFound(err))
	}
	return got, nil
}

// approvalInsertArgs checks a request about to be inserted and returns it
// with its ID and status filled in, and the arguments of
// ApprovalRequestInsert.
func (l *ledger) approvalInsertArgs(a ApprovalRequest) (ApprovalRequest, []any, error) {
	if a.TimeoutAt.IsZero() {
		return a, nil, errors.New("error inserting approval request: timeout is required")
	}
	if a.Status == "" {
		a.Status = ApprovalPending
	}
	if a.Status != ApprovalPending && a.DecidedBy == "" {
		// The decision is logged with its actor, and the log has no
		// anonymous entries.
		return a, nil, fmt.Errorf("error inserting approval request: a request inserted %s names who decided it", a.Status)
	}
	if len(a.DecisionDetail) > 0 && a.Status == ApprovalPending {
		return a, nil, errors.New("error inserting approval request: a pending request has no decision to detail")
	}
	riskTags := a.RiskTags
	if riskTags == nil {
		riskTags = []string{}
	}
	tags, err := jsonArg(&riskTags)
	if err != nil {
		return a, nil, fmt.Errorf("error inserting approval request: %w", err)
	}
	a.ID = idOr(a.ID, "apr")
	return a, []any{
		a.ID,
		a.InvocationID,
		a.OperationKey,
		textArg(a.SessionID),
		textArg(a.AgentID),
		a.Tool,
		rawJSONArg(a.Args),
		a.ArgsHash,
		a.ApproverRole,
		textArg(a.Reason),
		tags,
		string(a.Effect),
		string(a.Reversibility),
		rawJSONArg(a.Context),
		string(a.Status),
		l.timeArg(a.TimeoutAt),
		textArg(a.DecidedBy),
		l.nullTimeArg(a.DecidedAt),
	}, nil
}

// logOpened logs a new request: the agent asked, and, when the request was
// inserted already decided, the decision by whoever took it.
func (l *ledger) logOpened(ctx context.Context, tx *sql.Tx, a ApprovalRequest) error {
	for _, e := range openedEvents(a) {
		if _, err := l.appendEvent(ctx, tx, e); err != nil {
			return fmt.Errorf("error inserting approval request: %w", err)
		}
	}
	return nil
}

// openedEvents are the events a new request logs, in order.
func openedEvents(a ApprovalRequest) []ApprovalEvent {
	events := []ApprovalEvent{{
		ApprovalID:     a.ID,
		Kind:           ApprovalEventRequested,
		Actor:          "agent:" + a.AgentID,
		ArgsHashBefore: a.ArgsHash,
	}}
	if a.Status == ApprovalPending {
		return events
	}
	return append(events, ApprovalEvent{
		ApprovalID:     a.ID,
		Kind:           ApprovalEventKind(a.Status), // every final status names its event kind
		Actor:          a.DecidedBy,
		ArgsHashBefore: a.ArgsHash,
		Detail:         a.DecisionDetail,
	})
}

func (l *ledger) ApprovalRequestGet(ctx context.Context, id string) (ApprovalRequest, error) {
	a, err := scanApproval(l.conn.QueryRowContext(ctx, l.query("ApprovalRequestGet"), id))
	if err != nil {
		return ApprovalRequest{}, fmt.Errorf("error getting approval request %q: %w", id, notFound(err))
	}
	return a, nil
}

// ApprovalRequestGetDecided reads on the writer: PostgreSQL's FOR SHARE
// waits for a decider's row lock, and SQLite's one writer connection is
// the decider's until it commits.
func (l *ledger) ApprovalRequestGetDecided(ctx context.Context, id string) (ApprovalRequest, error) {
	a, err := scanApproval(l.db.QueryRowContext(ctx, l.query("ApprovalRequestGetDecided"), id))
	if err != nil {
		return ApprovalRequest{}, fmt.Errorf("error getting decided approval request %q: %w", id, notFound(err))
	}
	return a, nil
}

func (l *ledger) ApprovalRequestGetByKey(ctx context.Context, operationKey string) (ApprovalRequest, error) {
	a, err := scanApproval(l.conn.QueryRowContext(ctx, l.query("ApprovalRequestGetByKey"), operationKey))
	if err != nil {
		return ApprovalRequest{}, fmt.Errorf("error getting approval request by key %q: %w", operationKey, notFound(err))
	}
	return a, nil
}

func (l *ledger) ApprovalRequestListPendingBySession(ctx context.Context, sessionID string) ([]ApprovalRequest, error) {
	reqs, err := queryAll(ctx, l.conn, scanApproval, l.query("ApprovalRequestListPendingBySession"), sessionID)
	if err != nil {
		return nil, fmt.Errorf("error listing pending approval requests of session %q: %w", sessionID, err)
	}
	return reqs, nil
}

func (l *ledger) ApprovalRequestExpire(ctx context.Context, id string, to ApprovalStatus) (ApprovalRequest, error) {
	if to != ApprovalTimedOut && to != ApprovalAutoApproved {
		return ApprovalRequest{}, fmt.Errorf("error expiring approval request %q: %q is not a timeout outcome", id, to)
	}
	var got ApprovalRequest
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, l.query("ApprovalRequestExpire"), id, string(to), TimeoutActor)
		if err != nil {
			return fmt.Errorf("error closing the request: %w", err)
		}
		closed, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("error closing the request: %w", err)
		}
		// Zero rows: a decision or another timer got there first, and
		// logged what it did.
		if closed == 1 {
			if _, err := l.appendEvent(ctx, tx, ApprovalEvent{
				ApprovalID: id,
				Kind:       ApprovalEventKind(to),
				Actor:      TimeoutActor,
			}); err != nil {
				return err
			}
		}
		got, err = scanApproval(tx.QueryRowContext(ctx, l.query("ApprovalRequestGet"), id))
		return notFound(err)
	})
	if err != nil {
		return ApprovalRequest{}, fmt.Errorf("error expiring approval request %q: %w", id, err)
	}
	return got, nil
}

func (l *ledger) ApprovalRequestList(ctx context.Context, status ApprovalStatus, limit int) ([]ApprovalRequest, error) {
	reqs, err := queryAll(ctx, l.conn, scanApproval, l.query("ApprovalRequestList"), string(status), listLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("error listing approval requests: %w", err)
	}
	return reqs, nil
}

func scanApproval(row rowScanner) (ApprovalRequest, error) {
	var a ApprovalRequest
	err := row.Scan(
		&a.ID,
		&a.InvocationID,
		&a.OperationKey,
		textCol{&a.SessionID},
		textCol{&a.AgentID},
		&a.Tool,
		rawJSONCol{&a.Args},
		&a.ArgsHash,
		&a.ApproverRole,
		textCol{&a.Reason},
		jsonCol[[]string]{&a.RiskTags},
		&a.Effect,
		&a.Reversibility,
		rawJSONCol{&a.Context},
		&a.Status,
		timeCol{&a.TimeoutAt},
		textCol{&a.DecidedBy},
		nullTimeCol{&a.DecidedAt},
		timeCol{&a.CreatedAt},
	)
	return a, err
}
