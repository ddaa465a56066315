package ledger_test

import (
	"database/sql"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

// appliedMigration is a row of schema_migrations.
type appliedMigration struct {
	Version int
	Name    string
}

// allMigrations is every migration, as schema_migrations records them.
var allMigrations = []appliedMigration{
	{Version: 1, Name: "ledger"},
	{Version: 2, Name: "approval_gate"},
	{Version: 3, Name: "sessions_saga_postcall"},
	{Version: 4, Name: "reconciliation"},
	{Version: 5, Name: "message_status"},
	{Version: 6, Name: "sweep"},
	{Version: 7, Name: "receipt_owner"},
	{Version: 8, Name: "trust_boundaries"},
	{Version: 9, Name: "agent_callbacks"},
	{Version: 10, Name: "frozen_classification"},
	{Version: 11, Name: "approval_reversibility"},
	{Version: 12, Name: "rollback_closes_session"},
	{Version: 13, Name: "durable_postcall"},
	{Version: 14, Name: "platform_signatures"},
	{Version: 15, Name: "catalog_versions"},
	{Version: 16, Name: "console_sessions"},
	{Version: 17, Name: "canary"},
	{Version: 18, Name: "state_reads"},
	{Version: 19, Name: "approval_notifications"},
	{Version: 20, Name: "console_session_key"},
	{Version: 21, Name: "cap_and_listing_indexes"},
	{Version: 22, Name: "outbox_held"},
	{Version: 23, Name: "pending_approvals_by_session"},
}

func TestMigrate(t *testing.T) {
	t.Parallel()

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()

			t.Run("TwiceIsANoop", func(t *testing.T) {
				t.Parallel()
				open, raw := b.setup(t)
				s := open()

				require.NoError(t, s.Migrate(t.Context()))
				first := appliedMigrations(t, raw)
				require.Equal(t, allMigrations, first)

				require.NoError(t, s.Migrate(t.Context()))
				require.Equal(t, first, appliedMigrations(t, raw))
			})

			t.Run("ConcurrentCallsApplyOnce", func(t *testing.T) {
				t.Parallel()
				open, raw := b.setup(t)
				stores := []ledger.Store{open(), open()}

				var wg sync.WaitGroup
				errs := make([]error, len(stores))
				for i, s := range stores {
					wg.Go(func() { errs[i] = s.Migrate(t.Context()) })
				}
				wg.Wait()

				for _, err := range errs {
					require.NoError(t, err)
				}
				require.Equal(t, allMigrations, appliedMigrations(t, raw))
			})
		})
	}
}

// TestMigrationAddsDeliveryProof covers migration 3 adding "delivered needs
// a receipt" to deferred_items, which SQLite can only do by rebuilding the
// table: rows recorded before it come through whole, and a row that breaks
// the rule stops the migration until a human settles it.
func TestMigrationAddsDeliveryProof(t *testing.T) {
	t.Parallel()

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()

			t.Run("KeepsRecordedItems", func(t *testing.T) {
				t.Parallel()
				open, _ := b.setup(t)
				s := open()
				ctx := t.Context()
				require.NoError(t, ledger.MigrateTo(ctx, s, 2))

				receipt := &maestrotype.Receipt{
					Provider: "ses", ID: "SES-1", Fields: map[string]string{"message_id": "SES-1"},
					IssuedAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
				}
				for _, d := range []ledger.DeferredItem{
					{Status: ledger.DeferredRecorded, Reason: "after the call"},
					{Status: ledger.DeferredDelivered, Receipt: receipt},
					{Status: ledger.DeferredFailed, Reason: "SES throttled"},
				} {
					d.SessionID, d.OperationKey, d.Tool = "ses_a", "op_"+string(d.Status), "email.send"
					d.Args = json.RawMessage(`{"to": "a@example.com",  "body":"hi"}`)
					_, err := s.DeferredInsert(ctx, d)
					require.NoError(t, err)
				}
				before, err := s.DeferredListBySession(ctx, "ses_a")
				require.NoError(t, err)
				require.Len(t, before, 3)

				require.NoError(t, s.Migrate(ctx))
				after, err := s.DeferredListBySession(ctx, "ses_a")
				require.NoError(t, err)
				require.Equal(t, before, after)
			})

			t.Run("StopsAtADeliveryWithoutProof", func(t *testing.T) {
				t.Parallel()
				open, raw := b.setup(t)
				s := open()
				ctx := t.Context()
				require.NoError(t, ledger.MigrateTo(ctx, s, 2))

				// Schema 2 let a delivery be recorded without its receipt.
				_, err := raw.ExecContext(ctx, `INSERT INTO deferred_items (id, session_id, operation_key, tool, args, status)
					VALUES ('def_unproven', 'ses_a', 'op_unproven', 'email.send', '{}', 'delivered')`)
				require.NoError(t, err)

				require.Error(t, s.Migrate(ctx))
				require.Equal(t, allMigrations[:2], appliedMigrations(t, raw), "migration 3 rolled back whole")
				got, err := s.DeferredListBySession(ctx, "ses_a")
				require.NoError(t, err)
				require.Len(t, got, 1, "the row is still there for a human to settle")

				_, err = raw.ExecContext(ctx, `UPDATE deferred_items SET status = 'failed', reason = 'no receipt on record'
					WHERE id = 'def_unproven'`)
				require.NoError(t, err)
				require.NoError(t, s.Migrate(ctx))
				require.Equal(t, allMigrations, appliedMigrations(t, raw))
			})
		})
	}
}

func appliedMigrations(t *testing.T, raw *sql.DB) []appliedMigration {
	t.Helper()
	rows, err := raw.QueryContext(t.Context(), "SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
	require.NoError(t, err)
	defer rows.Close()

	var got []appliedMigration
	for rows.Next() {
		var (
			m         appliedMigration
			appliedAt any
		)
		require.NoError(t, rows.Scan(&m.Version, &m.Name, &appliedAt))
		require.NotNil(t, appliedAt)
		got = append(got, m)
	}
	require.NoError(t, rows.Err())
	return got
}
