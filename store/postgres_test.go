package store_test

import (
	"testing"

	"github.com/maestro-run/maestro/store/storetest"
)

func TestPostgresConformance(t *testing.T) {
	t.Parallel()
	storetest.RunConformance(t, storetest.Postgres)
}
