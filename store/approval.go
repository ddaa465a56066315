package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

func (l *ledger) ApprovalRequestInsert(ctx context.Context, a ApprovalRequest) (ApprovalRequest, error) {
	if a.TimeoutAt.IsZero() {
		return ApprovalRequest{}, errors.New("error inserting approval request: timeout is required")
	}
	if a.Status == "" {
		a.Status = ApprovalPending
	}
	riskTags := a.RiskTags
	if riskTags == nil {
		riskTags = []string{}
	}
	tags, err := jsonArg(&riskTags)
	if err != nil {
		return ApprovalRequest{}, fmt.Errorf("error inserting approval request: %w", err)
	}

	got, err := scanApproval(l.db.QueryRowContext(ctx, l.query("ApprovalRequestInsert"),
		idOr(a.ID, "apr"),
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
		rawJSONArg(a.Context),
		string(a.Status),
		l.timeArg(a.TimeoutAt),
		textArg(a.DecidedBy),
		l.nullTimeArg(a.DecidedAt),
	))
	switch {
	case err == nil:
		return got, nil
	case !errors.Is(err, sql.ErrNoRows):
		return ApprovalRequest{}, fmt.Errorf("error inserting approval request: %w", err)
	}
	// The key already has a request; ON CONFLICT waited for its writer to
	// commit, so the row is visible now.
	got, err = scanApproval(l.db.QueryRowContext(ctx, l.query("ApprovalRequestGetByKey"), a.OperationKey))
	if err != nil {
		return ApprovalRequest{}, fmt.Errorf("error getting approval request by key %q: %w", a.OperationKey, notFound(err))
	}
	return got, nil
}

func (l *ledger) ApprovalRequestGet(ctx context.Context, id string) (ApprovalRequest, error) {
	a, err := scanApproval(l.db.QueryRowContext(ctx, l.query("ApprovalRequestGet"), id))
	if err != nil {
		return ApprovalRequest{}, fmt.Errorf("error getting approval request %q: %w", id, notFound(err))
	}
	return a, nil
}

func (l *ledger) ApprovalRequestGetByKey(ctx context.Context, operationKey string) (ApprovalRequest, error) {
	a, err := scanApproval(l.db.QueryRowContext(ctx, l.query("ApprovalRequestGetByKey"), operationKey))
	if err != nil {
		return ApprovalRequest{}, fmt.Errorf("error getting approval request by key %q: %w", operationKey, notFound(err))
	}
	return a, nil
}

func (l *ledger) ApprovalRequestExpire(ctx context.Context, id string, to ApprovalStatus) (ApprovalRequest, error) {
	if to != ApprovalTimedOut && to != ApprovalAutoApproved {
		return ApprovalRequest{}, fmt.Errorf("error expiring approval request %q: %q is not a timeout outcome", id, to)
	}
	if _, err := l.db.ExecContext(ctx, l.query("ApprovalRequestExpire"), id, string(to)); err != nil {
		return ApprovalRequest{}, fmt.Errorf("error expiring approval request %q: %w", id, err)
	}
	return l.ApprovalRequestGet(ctx, id)
}

func (l *ledger) ApprovalRequestList(ctx context.Context, status ApprovalStatus, limit int) ([]ApprovalRequest, error) {
	reqs, err := queryAll(ctx, l.db, scanApproval, l.query("ApprovalRequestList"), string(status), listLimit(limit))
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
		rawJSONCol{&a.Context},
		&a.Status,
		timeCol{&a.TimeoutAt},
		textCol{&a.DecidedBy},
		nullTimeCol{&a.DecidedAt},
		timeCol{&a.CreatedAt},
	)
	return a, err
}
