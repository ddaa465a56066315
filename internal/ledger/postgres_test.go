package ledger_test

import (
	"testing"

	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
)

func TestPostgresConformance(t *testing.T) {
	t.Parallel()
	ledgertest.RunConformance(t, ledgertest.Postgres)
}
