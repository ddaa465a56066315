//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// approvalRecord is one approval request as the ledger's own tables hold
// it: the operation key it gates, how often it was decided and how many of
// its tokens were spent.
type approvalRecord struct {
	id, key, tool, status string
	decisions, spent      int
}

// approvalRecords reads every approval request with its decisions, counted
// from the append-only approval log, and its spent tokens. A rollback's
// compensation asks for approval without an invocation of its own; its
// request is keyed by its own operation key.
func approvalRecords(ctx context.Context, dsn string) ([]approvalRecord, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("error connecting to the ledger: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `
		SELECT r.id, COALESCE(i.operation_key, r.operation_key), r.tool, r.status,
			(SELECT count(*) FROM approval_events e WHERE e.approval_id = r.id
				AND e.kind IN ('approved', 'rejected', 'modified', 'timed_out', 'auto_approved')),
			(SELECT count(*) FROM approval_tokens t WHERE t.approval_id = r.id AND t.used_at IS NOT NULL)
		FROM approval_requests r LEFT JOIN invocations i ON i.id = r.invocation_id`)
	if err != nil {
		return nil, fmt.Errorf("error reading approval requests: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (approvalRecord, error) {
		var a approvalRecord
		err := row.Scan(&a.id, &a.key, &a.tool, &a.status, &a.decisions, &a.spent)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("error reading approval requests: %w", err)
	}
	return out, nil
}

// reconciliationQueue reads every page of the reconciliation queue, as an
// operator sees it: what is held for a human.
func reconciliationQueue(ctx context.Context, ops *apiclient.Client) ([]apitype.Reconciliation, error) {
	var out []apitype.Reconciliation
	q := apitype.ListQuery{Limit: 500}
	for {
		page, err := ops.ReconciliationPage(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("error listing reconciliations: %w", err)
		}
		out = append(out, page.Reconciliations...)
		if page.Next == "" {
			return out, nil
		}
		q.Cursor = page.Next
	}
}

// queue is the reconciliation queue indexed the two ways the proof asks
// it: held effects by operation key, held post-call work (a held item, or
// a delivery attempt held) by session.
type queue struct {
	effects  map[string]apitype.Reconciliation
	postCall map[string]apitype.Reconciliation
}

func indexQueue(list []apitype.Reconciliation) queue {
	q := queue{effects: map[string]apitype.Reconciliation{}, postCall: map[string]apitype.Reconciliation{}}
	for _, r := range list {
		if r.Held != nil {
			q.postCall[r.Held.SessionID] = r
			continue
		}
		if r.Status == string(mt.EffectNeedsReconciliation) {
			q.effects[r.OperationKey] = r
			// A post-call delivery's attempt held for a human holds the
			// session's message with it.
			if rest, ok := strings.CutPrefix(r.OperationKey, "postcall:"); ok {
				session, _, _ := strings.Cut(rest, ":")
				q.postCall[session] = r
			}
		}
	}
	return q
}

// postCallResends counts, per session, the post-call attempts whose
// unknown outcome the tool's on_unknown policy settled by sending again:
// each may have left one more email at the provider, by design.
func postCallResends(ctx context.Context, ops *apiclient.Client, session string) (int, error) {
	s, err := ops.Session(ctx, session)
	if err != nil {
		return 0, fmt.Errorf("error reading session %s: %w", session, err)
	}
	n := 0
	for _, it := range s.PostCall {
		for _, a := range it.Attempts {
			if a.Outcome == "unknown" && a.ResolvedBy != "" {
				n++
			}
		}
	}
	return n, nil
}

// deliveriesOf counts the post-call deliveries of a session's message at
// the providers: emails to the office, and texts of a fallback channel.
func deliveriesOf(message string, emails []string, texts []effect) int {
	n := 0
	for _, e := range emails {
		if strings.Contains(e, message) {
			n++
		}
	}
	for _, e := range texts {
		if strings.Contains(e.marker, message) {
			n++
		}
	}
	return n
}
