package ledger_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPlatformSignaturePrune counts rows with raw SQL, which the store's
// interface cannot: a claim deletes the signatures past their expiry and
// keeps the live ones.
func TestPlatformSignaturePrune(t *testing.T) {
	t.Parallel()
	// Times in the text form SQLite stores; PostgreSQL parses it too.
	at := func(d time.Duration) string { return time.Now().Add(d).UTC().Format("2006-01-02T15:04:05.000Z") }

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open, raw := b.setup(t)
			s := open()
			require.NoError(t, s.Migrate(t.Context()))
			for id, expires := range map[string]string{
				"vapi:dead1": at(-time.Hour), "vapi:dead2": at(-time.Minute), "vapi:live": at(time.Hour),
			} {
				_, err := raw.ExecContext(t.Context(), "INSERT INTO platform_signatures (id, expires_at) VALUES ($1, $2)", id, expires)
				require.NoError(t, err)
			}

			first, err := s.PlatformSignatureClaim(t.Context(), "vapi:new", time.Now().Add(5*time.Minute))
			require.NoError(t, err)
			require.True(t, first)

			var ids []string
			rows, err := raw.QueryContext(t.Context(), "SELECT id FROM platform_signatures ORDER BY id")
			require.NoError(t, err)
			defer rows.Close()
			for rows.Next() {
				var id string
				require.NoError(t, rows.Scan(&id))
				ids = append(ids, id)
			}
			require.NoError(t, rows.Err())
			require.Equal(t, []string{"vapi:live", "vapi:new"}, ids, "the expired signatures are gone")
		})
	}
}
