package ledger_test

import (
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

// TestApprovalEventsAreAppendOnly goes around the store with raw SQL to
// prove the database itself refuses to rewrite the audit trail.
func TestApprovalEventsAreAppendOnly(t *testing.T) {
	t.Parallel()

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open, raw := b.setup(t)
			s := open()
			ctx := t.Context()
			require.NoError(t, s.Migrate(ctx))
			req := insertRequest(t, s)

			count := func() int {
				var n int
				require.NoError(t, raw.QueryRowContext(ctx, "SELECT count(*) FROM approval_events").Scan(&n))
				return n
			}
			require.Equal(t, 1, count(), "the request logged its 'requested' event")

			requireAppendOnly(t, b, raw, "approval_events", "actor = 'operator:forger'")

			events, err := s.ApprovalEventList(ctx, req.ID)
			require.NoError(t, err)
			require.Len(t, events, 1)
			require.Equal(t, "agent:agent_1", events[0].Actor)

			// Appending is still allowed; that is the point of the log.
			_, err = raw.ExecContext(ctx, `INSERT INTO approval_events (approval_id, kind, actor, args_hash_before)
				VALUES ($1, 'decision_refused', 'operator:intern', 'h')`, req.ID)
			require.NoError(t, err)
			require.Equal(t, 2, count())
		})
	}
}

// TestApprovalTokensOneUnusedPerRequest proves the partial unique index
// holds even for a writer that bypasses the ledger.
func TestApprovalTokensOneUnusedPerRequest(t *testing.T) {
	t.Parallel()

	const insert = `INSERT INTO approval_tokens (id, approval_id, args_hash, expires_at, used_at, used_by)
		VALUES ($1, $2, 'h', $3, $4, $5)`

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open, raw := b.setup(t)
			s := open()
			ctx := t.Context()
			require.NoError(t, s.Migrate(ctx))
			req := insertRequest(t, s)

			// Times in the text form SQLite stores; PostgreSQL parses it too.
			at := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
			exec := func(id string, usedAt, usedBy any) error {
				_, err := raw.ExecContext(ctx, insert, id, req.ID, at, usedAt, usedBy)
				return err
			}
			require.NoError(t, exec("tok_unused", nil, nil))
			require.Error(t, exec("tok_second_unused", nil, nil), "a second spendable token")
			require.NoError(t, exec("tok_used", at, "worker:a"), "spent tokens do not count")
			require.Error(t, exec("tok_used_by_nobody", at, nil), "a spend names its spender")
		})
	}
}

func insertRequest(t *testing.T, s ledger.Store) ledger.ApprovalRequest {
	t.Helper()
	args := json.RawMessage(`{"amount":{"cents":1200}}`)
	req, err := s.ApprovalRequestInsert(t.Context(), ledger.ApprovalRequest{
		InvocationID: "inv_1",
		OperationKey: "op_1",
		AgentID:      "agent_1",
		Tool:         "payments.refund",
		Args:         args,
		ArgsHash:     "h",
		ApproverRole: "finance",
		TimeoutAt:    time.Now().Add(time.Hour),
	})
	require.NoError(t, err)
	return req
}

// TestReconciliationEventsAreAppendOnly proves, around the store, that the
// database refuses to rewrite how an unknown outcome was settled.
func TestReconciliationEventsAreAppendOnly(t *testing.T) {
	t.Parallel()

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open, raw := b.setup(t)
			s := open()
			ctx := t.Context()
			require.NoError(t, s.Migrate(ctx))
			_, err := s.ReconciliationEventInsert(ctx, ledger.ReconciliationEvent{
				OperationKey: "op_1", Kind: ledger.ReconciliationAbsent, Actor: "reconciler:a", Reason: "none at the provider",
			})
			require.NoError(t, err)

			requireAppendOnly(t, b, raw, "reconciliation_events", "actor = 'operator:forger'")
			events, err := s.ReconciliationEventList(ctx, "op_1")
			require.NoError(t, err)
			require.Len(t, events, 1)
			require.Equal(t, "reconciler:a", events[0].Actor)
		})
	}
}

// requireAppendOnly proves, around the store, that the database refuses to
// update, delete or (on PostgreSQL) truncate table's rows; set is a valid
// SET clause for the UPDATE.
func requireAppendOnly(t *testing.T, b backend, raw *sql.DB, table, set string) {
	t.Helper()
	ctx := t.Context()
	_, err := raw.ExecContext(ctx, "UPDATE "+table+" SET "+set)
	require.ErrorContains(t, err, "append-only")
	_, err = raw.ExecContext(ctx, "DELETE FROM "+table)
	require.ErrorContains(t, err, "append-only")
	if b.name == "postgres" {
		_, err = raw.ExecContext(ctx, "TRUNCATE "+table)
		require.ErrorContains(t, err, "append-only")
	}
}
