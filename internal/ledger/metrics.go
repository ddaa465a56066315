package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// MetricCounts are the ledger's totals that metrics report. They are read
// from the ledger at scrape time, so every process reports the same
// numbers however many processes wrote them.
type MetricCounts struct {
	// Invocations counts invocations by tool, route and state.
	Invocations []InvocationCount
	// Refusals counts refusals by code.
	Refusals map[string]int64
	// ApprovalsPending counts approval requests still undecided.
	ApprovalsPending int64
	// OldestPendingApproval is when the oldest undecided request opened;
	// zero when none is pending.
	OldestPendingApproval time.Time
	// ReconciliationsOpen counts held work by kind: "effect" for effects
	// whose outcome is unknown, "post_call" for held post-call work,
	// "signal" for signals Temporal refused as invalid.
	ReconciliationsOpen map[string]int64
	// Compensations counts compensations attempted, by undo entry status
	// (compensated, failed, skipped).
	Compensations map[string]int64
	// SessionsRolledBack counts sessions with at least one compensation
	// attempted.
	SessionsRolledBack int64
}

// InvocationCount is the number of invocations of one tool, route and
// state.
type InvocationCount struct {
	Tool  string
	Route string
	State string
	Count int64
}

func (l *ledger) MetricCounts(ctx context.Context) (MetricCounts, error) {
	var m MetricCounts
	var err error
	m.Invocations, err = queryAll(ctx, l.conn, func(row rowScanner) (InvocationCount, error) {
		var c InvocationCount
		err := row.Scan(&c.Tool, &c.Route, &c.State, &c.Count)
		return c, err
	}, l.query("MetricsInvocationCounts"))
	if err != nil {
		return MetricCounts{}, fmt.Errorf("error counting invocations: %w", err)
	}
	if m.Refusals, err = l.countsBy(ctx, "MetricsRefusalCounts"); err != nil {
		return MetricCounts{}, fmt.Errorf("error counting refusals: %w", err)
	}
	if m.ReconciliationsOpen, err = l.countsBy(ctx, "MetricsReconciliationsOpen"); err != nil {
		return MetricCounts{}, fmt.Errorf("error counting open reconciliations: %w", err)
	}
	if m.Compensations, err = l.countsBy(ctx, "MetricsCompensationCounts"); err != nil {
		return MetricCounts{}, fmt.Errorf("error counting compensations: %w", err)
	}
	if err := l.conn.QueryRowContext(ctx, l.query("MetricsApprovalsPending")).Scan(&m.ApprovalsPending); err != nil {
		return MetricCounts{}, fmt.Errorf("error counting pending approvals: %w", err)
	}
	err = l.conn.QueryRowContext(ctx, l.query("MetricsApprovalOldestPending")).Scan(timeCol{&m.OldestPendingApproval})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return MetricCounts{}, fmt.Errorf("error reading the oldest pending approval: %w", err)
	}
	if err := l.conn.QueryRowContext(ctx, l.query("MetricsSessionsRolledBack")).Scan(&m.SessionsRolledBack); err != nil {
		return MetricCounts{}, fmt.Errorf("error counting rolled back sessions: %w", err)
	}
	return m, nil
}

// countsBy runs a query answering (label, count) rows.
func (l *ledger) countsBy(ctx context.Context, name string) (map[string]int64, error) {
	type row struct {
		label string
		n     int64
	}
	rows, err := queryAll(ctx, l.conn, func(r rowScanner) (row, error) {
		var out row
		err := r.Scan(&out.label, &out.n)
		return out, err
	}, l.query(name))
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.label] = r.n
	}
	return out, nil
}
