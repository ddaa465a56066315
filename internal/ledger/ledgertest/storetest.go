// Package storetest opens isolated ledgers for tests and holds the
// conformance suite every store backend must pass.
package ledgertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

// DefaultDatabaseURL is used when DATABASE_URL is unset.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Postgres returns a migrated store in a fresh schema of the test database,
// dropped when the test ends.
func Postgres(t *testing.T) ledger.Store {
	t.Helper()
	dsn := PostgresDSN(t)
	return openMigrated(t, func(ctx context.Context) (ledger.Store, error) {
		return ledger.OpenPostgres(ctx, dsn)
	})
}

// PostgresService returns a store opened the way the service runs on
// PostgreSQL: migrated by the owner in a fresh schema, then used as a
// service role of its own, dropped when the test ends. Roles are
// cluster-wide, so each test gets its own.
func PostgresService(t *testing.T) ledger.Store {
	t.Helper()
	dsn, role := PostgresServiceDSN(t)
	s, err := ledger.OpenPostgresService(t.Context(), dsn, role)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// PostgresServiceDSN is PostgresDSN with a fresh service role name, which
// is dropped after the schema when the test ends.
func PostgresServiceDSN(t *testing.T) (dsn, role string) {
	t.Helper()
	role = "mt_svc_" + randomHex(8)
	// Registered first, so it runs after the schema, and the privileges
	// on it, are gone.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, baseURL())
		require.NoError(t, err)
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "DROP ROLE IF EXISTS "+role)
		require.NoError(t, err)
	})
	return PostgresDSN(t), role
}

// SQLite returns a migrated store in a file under the test's temporary
// directory.
func SQLite(t *testing.T) ledger.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	return openMigrated(t, func(ctx context.Context) (ledger.Store, error) {
		return ledger.OpenSQLite(ctx, path)
	})
}

func openMigrated(t *testing.T, open func(context.Context) (ledger.Store, error)) ledger.Store {
	t.Helper()
	ctx := t.Context()
	s, err := open(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.Migrate(ctx))
	return s
}

// PostgresDSN creates an empty schema, dropped when the test ends, and
// returns a connection string whose search_path points at it, for tests
// that open and migrate a store themselves. The server comes from
// DATABASE_URL (default DefaultDatabaseURL). An unreachable server fails
// the test, so a missing database cannot pass for a green run, unless
// MAESTRO_SKIP_POSTGRES=1 says to skip.
func PostgresDSN(t *testing.T) string {
	t.Helper()
	base := baseURL()

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	schema := "mt_" + randomHex(8)
	dsn, err := ledger.SchemaCreate(ctx, base, schema)
	if Unreachable(err) {
		if os.Getenv("MAESTRO_SKIP_POSTGRES") == "1" {
			t.Skipf("skipping: PostgreSQL unreachable and MAESTRO_SKIP_POSTGRES=1: %v", err)
		}
		t.Fatalf("%v (set DATABASE_URL, or MAESTRO_SKIP_POSTGRES=1 to skip)", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() {
		// t.Context is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, ledger.SchemaDrop(ctx, base, schema))
	})
	return dsn
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}

func baseURL() string {
	if base := os.Getenv("DATABASE_URL"); base != "" {
		return base
	}
	return DefaultDatabaseURL
}

// Unreachable reports whether err is a failure to connect to PostgreSQL
// at all, rather than one of a statement run there.
func Unreachable(err error) bool {
	var connect *pgconn.ConnectError
	return errors.As(err, &connect)
}
