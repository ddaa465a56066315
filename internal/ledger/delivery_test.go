package ledger_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeliveredNeedsReceipt writes with raw SQL, going around the store's
// Go checks, to prove the tables themselves refuse a delivery claimed
// without a receipt, whether inserted that way or updated into it.
func TestDeliveredNeedsReceipt(t *testing.T) {
	t.Parallel()

	const receipt = `{"provider":"ses","id":"SES-1","fields":{},"issued_at":"2030-01-02T03:04:05Z"}`

	tables := []struct {
		name   string
		insert string // $1 is the row's key, $2 its status, $3 its receipt
		update string // $1 is the row's key
	}{
		{
			name: "deferred_items",
			insert: `INSERT INTO deferred_items (id, session_id, operation_key, tool, args, status, receipt)
				VALUES ($1, 'ses_a', $1, 'email.send', '{}', $2, $3)`,
			update: `UPDATE deferred_items SET status = 'delivered' WHERE id = $1`,
		},
		{
			name: "postcall_items",
			insert: `INSERT INTO postcall_items (session_id, item_key, tool, source, operation_key, status, receipt)
				VALUES ('ses_a', $1, 'email.send', 'transcript:callback_request#3', $1, $2, $3)`,
			update: `UPDATE postcall_items SET status = 'delivered' WHERE item_key = $1`,
		},
	}

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open, raw := b.setup(t)
			require.NoError(t, open().Migrate(t.Context()))

			for _, tbl := range tables {
				insert := func(key, status string, receipt any) error {
					_, err := raw.ExecContext(t.Context(), tbl.insert, key, status, receipt)
					return err
				}
				// The control rows prove the statements are sound, so each
				// refusal below is the constraint's doing.
				require.NoError(t, insert("with_receipt", "delivered", receipt), tbl.name)
				require.NoError(t, insert("not_yet", "failed", nil), tbl.name)

				require.Error(t, insert("without_receipt", "delivered", nil), tbl.name)
				_, err := raw.ExecContext(t.Context(), tbl.update, "not_yet")
				require.Error(t, err, "%s: updated to delivered without a receipt", tbl.name)
			}
		})
	}
}
