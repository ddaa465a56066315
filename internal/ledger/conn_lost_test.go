package ledger_test

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

func TestConnectionLost(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		io.ErrUnexpectedEOF,
		fmt.Errorf("error granting: %w", pgconn.ErrConnClosed),
		driver.ErrBadConn,
		&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "08006"},
	} {
		require.True(t, ledger.ConnectionLost(err), "%v", err)
	}
	for _, err := range []error{
		nil,
		errors.New("migration 7 failed"),
		&pgconn.PgError{Code: "42501", Message: "permission denied"},
	} {
		require.False(t, ledger.ConnectionLost(err), "%v", err)
	}
}
