package ledger

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadOnlyKnowsAPlainSelectFromALockOrAWrite(t *testing.T) {
	t.Parallel()
	require.True(t, readOnly("-- Why this reads.\nSELECT id\n  FROM sessions WHERE id = $1;"))
	require.False(t, readOnly("SELECT id FROM sessions WHERE id = $1 FOR UPDATE;"))
	require.False(t, readOnly("-- SELECT in a comment does not count.\nINSERT INTO sessions (id) VALUES ($1) RETURNING id;"))
	require.False(t, readOnly("WITH moved AS (UPDATE effects SET status = $2 RETURNING *) SELECT * FROM moved;"))
}

func TestSQLiteReadersRefuseToWrite(t *testing.T) {
	t.Parallel()
	s, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "ledger.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(t.Context()))
	l := s.(*ledger)
	_, err = l.readDB.ExecContext(t.Context(), "DELETE FROM sessions")
	require.ErrorContains(t, err, "readonly")
	// A write routed through the ledger's statements goes to the writer.
	rows, err := l.conn.QueryContext(t.Context(), "DELETE FROM sessions RETURNING id")
	require.NoError(t, err)
	require.NoError(t, rows.Close())
}
