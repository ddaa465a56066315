package ledger_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
)

// backend gives tests that need raw SQL a fresh database per test, with a
// way to open stores on it and a plain handle on the same database.
type backend struct {
	name  string
	setup func(t *testing.T) (open func() ledger.Store, raw *sql.DB)
}

var backends = []backend{
	{
		name: "postgres",
		setup: func(t *testing.T) (func() ledger.Store, *sql.DB) {
			dsn := ledgertest.PostgresDSN(t)
			return opener(t, func(ctx context.Context) (ledger.Store, error) { return ledger.OpenPostgres(ctx, dsn) }),
				rawDB(t, "pgx", dsn)
		},
	},
	{
		name: "sqlite",
		setup: func(t *testing.T) (func() ledger.Store, *sql.DB) {
			path := filepath.Join(t.TempDir(), "ledger.db")
			return opener(t, func(ctx context.Context) (ledger.Store, error) { return ledger.OpenSQLite(ctx, path) }),
				rawDB(t, "sqlite", path)
		},
	},
}

// opener returns a function opening a new, unmigrated store that closes
// when the test ends.
func opener(t *testing.T, open func(context.Context) (ledger.Store, error)) func() ledger.Store {
	return func() ledger.Store {
		t.Helper()
		s, err := open(t.Context())
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		return s
	}
}

func rawDB(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}
