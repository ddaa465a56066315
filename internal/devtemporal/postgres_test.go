package devtemporal_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
)

// TestPostgresWithShards runs a workflow through a server whose state is
// in PostgreSQL over several history shards, restarts it on the same
// databases, and finds the finished run there.
func TestPostgresWithShards(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	pg := uniquePostgres(t)
	pg.Shards = 3
	// Each start takes ports found free then: the restart is on the same
	// databases, and a test running alongside may have taken the ports the
	// first server let go.
	cfg := devtemporal.Config{Postgres: &pg}

	srv := start(ctx, t, cfg)
	c := dial(t, srv)
	stopWorker := runWorker(t, c)
	first := runGreet(ctx, t, c, "first", "ada")
	stopWorker()
	c.Close()
	require.NoError(t, srv.Stop())

	srv = start(ctx, t, cfg)
	c = dial(t, srv)
	defer c.Close()
	desc, err := c.DescribeWorkflowExecution(ctx, "first", first)
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, desc.GetWorkflowExecutionInfo().GetStatus())

	history := connect(ctx, t, pg.URL, pg.Database)
	require.Eventually(t, func() bool {
		var shards int
		err := history.QueryRow(ctx, "SELECT count(*) FROM shards").Scan(&shards)
		return err == nil && shards == pg.Shards
	}, time.Minute, 100*time.Millisecond, "one row per history shard")
	visibility := connect(ctx, t, pg.URL, pg.VisibilityDatabase)
	var runs int
	require.NoError(t, visibility.QueryRow(ctx, "SELECT count(*) FROM executions_visibility WHERE workflow_id = 'first'").Scan(&runs))
	require.Equal(t, 1, runs, "visibility lives in its own database")

	stopWorker = runWorker(t, c)
	defer stopWorker()
	runGreet(ctx, t, c, "second", "grace")
}

func TestPostgresRejectsBadSettings(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		pg      devtemporal.Postgres
		wantErr string
	}{
		"not a postgres URL": {devtemporal.Postgres{URL: "mysql://h/db"}, "must start with postgres://"},
		"no host":            {devtemporal.Postgres{URL: "postgres:///db"}, "names no host"},
		"unsafe name":        {devtemporal.Postgres{URL: "postgres://h/db", Database: `x"; DROP`}, "lower-case letters"},
		"one database":       {devtemporal.Postgres{URL: "postgres://h/db", Database: "t", VisibilityDatabase: "t"}, "separate databases"},
		"negative shards":    {devtemporal.Postgres{URL: "postgres://h/db", Shards: -1}, "at least 1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, err := devtemporal.Start(t.Context(), devtemporal.Config{Postgres: &tc.pg})
			require.ErrorContains(t, err, tc.wantErr)
			require.Nil(t, srv)
		})
	}
}

// uniquePostgres names a database pair no other test uses and drops it
// once the test's servers have stopped.
func uniquePostgres(t *testing.T) devtemporal.Postgres {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = ledgertest.DefaultDatabaseURL
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	suffix := hex.EncodeToString(b)
	pg := devtemporal.Postgres{URL: base, Database: "temporal_" + suffix, VisibilityDatabase: "temporal_visibility_" + suffix}
	// Registered before any server starts, so it runs after they stop.
	t.Cleanup(func() { require.NoError(t, devtemporal.DropPostgres(context.Background(), pg)) })
	return pg
}

func connect(ctx context.Context, t *testing.T, base, database string) *pgx.Conn {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + database
	conn, err := pgx.Connect(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
