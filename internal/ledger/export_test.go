package ledger

import (
	"context"
	"fmt"
)

// MigrateTo applies the migrations up to and including version, so a test
// can write rows under an older schema and watch a later migration carry
// them over.
func MigrateTo(ctx context.Context, s Store, version int) error {
	l, ok := s.(*ledger)
	if !ok {
		return fmt.Errorf("error migrating to version %d: %T is not the ledger", version, s)
	}
	if version < 1 || version > len(l.migrations) {
		return fmt.Errorf("error migrating to version %d: there are %d migrations", version, len(l.migrations))
	}
	partial := &ledger{db: l.db, conn: l.conn, dialect: l.dialect}
	partial.migrations = l.migrations[:version]
	return partial.Migrate(ctx)
}
