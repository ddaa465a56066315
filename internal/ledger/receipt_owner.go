package ledger

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrReceiptTaken is returned when an effect would be settled with a
// provider record that the ledger already credits to another operation key.
// One record proves one effect, so the second settle is refused in the
// transaction that would have made it.
var ErrReceiptTaken = errors.New("another operation key already holds this receipt")

// receiptOwnerIndex enforces ErrReceiptTaken (migration 005).
const receiptOwnerIndex = "effects_receipt_provider_id_key"

// receiptTaken reports whether err is a write refused by
// receiptOwnerIndex: PostgreSQL names the index as the violated
// constraint, SQLite names it in the message.
func receiptTaken(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505" && pgErr.ConstraintName == receiptOwnerIndex
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") && strings.Contains(err.Error(), receiptOwnerIndex)
}

// asReceiptTaken turns a write refused by receiptOwnerIndex into
// ErrReceiptTaken and leaves any other error as it is.
func asReceiptTaken(err error) error {
	if receiptTaken(err) {
		return ErrReceiptTaken
	}
	return err
}
