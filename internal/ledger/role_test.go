package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
)

func TestPostgresConformanceAsServiceRole(t *testing.T) {
	t.Parallel()
	ledgertest.RunConformance(t, ledgertest.PostgresService)
}

// TestServiceRoleCannotRewriteApprovalHistory uses the ledger as the
// service, then tries, as the service role, every way of rewriting
// approval_events: each is refused by privilege, before the append-only
// trigger is even reached, and the role cannot switch the trigger off.
func TestServiceRoleCannotRewriteApprovalHistory(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, role := ledgertest.PostgresServiceDSN(t)
	s, err := ledger.OpenPostgresService(ctx, dsn, role)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	// The service's own work still goes through: a request, its events.
	apr := insertRequest(t, s)
	_, err = s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{ApprovalID: apr.ID, Decision: ledger.DecisionApprove, Actor: "operator:ops", TokenTTL: time.Minute})
	require.NoError(t, err)
	events, err := s.ApprovalEventList(ctx, apr.ID)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(events), 2)
	require.NoError(t, s.Migrate(ctx), "a migrated schema passes the service role's check")

	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, "SET ROLE "+role)
	require.NoError(t, err)

	for _, stmt := range []string{
		"UPDATE approval_events SET actor = 'operator:someone-else'",
		"DELETE FROM approval_events",
		"TRUNCATE approval_events",
		"ALTER TABLE approval_events DISABLE TRIGGER approval_events_append_only",
		"DROP TRIGGER approval_events_append_only ON approval_events",
		"UPDATE tool_registry_versions SET effect = 'read'",
		"DELETE FROM tool_registry_versions",
		"TRUNCATE tool_registry_versions",
		"ALTER TABLE tool_registry_versions DISABLE TRIGGER tool_registry_versions_append_only",
		"INSERT INTO schema_migrations (version, name) VALUES (999, 'forged')",
		"CREATE TABLE shadow (id int)",
	} {
		_, err := conn.Exec(ctx, stmt)
		var pgErr *pgconn.PgError
		require.True(t, errors.As(err, &pgErr), "%s: %v", stmt, err)
		require.Equal(t, "42501", pgErr.Code, "%s: %s", stmt, pgErr.Message)
		require.NotContains(t, pgErr.Message, "append-only", "%s is refused by privilege, not by the trigger", stmt)
	}
	var n int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM approval_events WHERE approval_id = $1", apr.ID).Scan(&n))
	require.Equal(t, len(events), n, "the service role may read approval history")
}

func TestServiceRoleNameIsValidated(t *testing.T) {
	t.Parallel()
	_, err := ledger.OpenPostgresService(t.Context(), ledgertest.PostgresDSN(t), `maestro"; DROP TABLE x; --`)
	require.ErrorContains(t, err, "service role")
}
