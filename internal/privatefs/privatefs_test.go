package privatefs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/privatefs"
)

func TestExistingDirectoryAndDatabaseAreTightened(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, privatefs.MkdirAll(dir))
	requireMode(t, dir, 0o700)

	db := filepath.Join(dir, "ledger.db")
	fresh, err := privatefs.SQLiteFile(db)
	require.NoError(t, err)
	require.True(t, fresh, "a new file has no schema yet")
	requireMode(t, db, 0o600)
	fresh, err = privatefs.SQLiteFile(db)
	require.NoError(t, err)
	require.True(t, fresh, "an empty file left by a stopped start still has none")

	require.NoError(t, os.WriteFile(db, []byte("SQLite format 3\x00"), 0o644))
	require.NoError(t, os.Chmod(db, 0o644))
	require.NoError(t, os.WriteFile(db+"-wal", nil, 0o644))
	require.NoError(t, os.Chmod(db+"-wal", 0o644))
	fresh, err = privatefs.SQLiteFile(db)
	require.NoError(t, err)
	require.False(t, fresh)
	requireMode(t, db, 0o600)
	requireMode(t, db+"-wal", 0o600)
	_, err = os.Stat(db + "-shm")
	require.ErrorIs(t, err, os.ErrNotExist, "a companion that is not there is not created")
}

func requireMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, want, info.Mode().Perm(), path)
}
