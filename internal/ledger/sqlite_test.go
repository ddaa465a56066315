package ledger_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
)

func TestSQLiteConformance(t *testing.T) {
	t.Parallel()
	ledgertest.RunConformance(t, ledgertest.SQLite)
}

func TestOpenSQLite(t *testing.T) {
	t.Parallel()

	t.Run("UsesWAL", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "ledger.db")
		s, err := ledger.OpenSQLite(t.Context(), path)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })

		// journal_mode is a property of the file, so a plain connection
		// sees what the store set.
		var mode string
		require.NoError(t, rawDB(t, "sqlite", path).QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode))
		require.Equal(t, "wal", mode)
	})

	t.Run("RefusesPathWithQuery", func(t *testing.T) {
		t.Parallel()
		_, err := ledger.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "ledger.db?mode=ro"))
		require.Error(t, err)
	})
}
