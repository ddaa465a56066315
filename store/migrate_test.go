package store_test

import (
	"database/sql"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/store"
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
				stores := []store.Store{open(), open()}

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
