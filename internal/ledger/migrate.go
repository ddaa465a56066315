package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
)

// migration is one numbered schema change, applied at most once.
type migration struct {
	version int
	name    string
	sql     string
}

var migrationFile = regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads dir's migrations in version order. Versions must run
// 1, 2, 3… without gaps, so a migration lost in a merge cannot go unnoticed.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("error listing migrations in %s: %w", dir, err)
	}
	var migrations []migration
	for _, e := range entries {
		m := migrationFile.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("error loading migrations: %s does not match NNN_name.sql", path.Join(dir, e.Name()))
		}
		version, _ := strconv.Atoi(m[1]) // three digits, by the pattern
		text, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("error reading migration %s: %w", e.Name(), err)
		}
		migrations = append(migrations, migration{version: version, name: m[2], sql: string(text)})
	}
	slices.SortFunc(migrations, func(a, b migration) int { return a.version - b.version })
	for i, m := range migrations {
		if m.version != i+1 {
			return nil, fmt.Errorf("error loading migrations: expected version %d in %s, found %d", i+1, dir, m.version)
		}
	}
	return migrations, nil
}

// Migrate applies every migration not yet recorded in schema_migrations, in
// version order, each in its own transaction. Every transaction first takes
// the dialect's migration lock and then rereads what is applied, so two
// processes migrating at once apply each version exactly once. On a ledger
// opened as the service role it only checks that every migration is
// applied: the owner migrates (OpenPostgresService).
func (l *ledger) Migrate(ctx context.Context) error {
	if l.serviceRole != "" {
		return l.checkMigrated(ctx)
	}
	var applied map[int]bool
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, l.query("MigrationLock")); err != nil {
			return fmt.Errorf("error taking the migration lock: %w", err)
		}
		if _, err := tx.ExecContext(ctx, l.query("MigrationTableCreate")); err != nil {
			return fmt.Errorf("error creating schema_migrations: %w", err)
		}
		var err error
		applied, err = l.appliedVersions(ctx, tx)
		return err
	})
	if err != nil {
		return err
	}

	for _, m := range l.migrations {
		if applied[m.version] {
			continue
		}
		if err := l.withTx(ctx, func(tx *sql.Tx) error { return l.apply(ctx, tx, m) }); err != nil {
			return err
		}
	}
	return nil
}

// apply runs one migration unless another process applied it while this one
// waited for the lock.
func (l *ledger) apply(ctx context.Context, tx *sql.Tx, m migration) error {
	if _, err := tx.ExecContext(ctx, l.query("MigrationLock")); err != nil {
		return fmt.Errorf("error taking the migration lock: %w", err)
	}
	applied, err := l.appliedVersions(ctx, tx)
	if err != nil {
		return err
	}
	if applied[m.version] {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("error applying migration %03d_%s: %w", m.version, m.name, err)
	}
	if _, err := tx.ExecContext(ctx, l.query("MigrationRecord"), m.version, m.name); err != nil {
		return fmt.Errorf("error recording migration %03d_%s: %w", m.version, m.name, err)
	}
	return nil
}

func (l *ledger) appliedVersions(ctx context.Context, q querier) (map[int]bool, error) {
	scan := func(row rowScanner) (int, error) {
		var v int
		err := row.Scan(&v)
		return v, err
	}
	versions, err := queryAll(ctx, q, scan, l.query("MigrationVersionList"))
	if err != nil {
		return nil, fmt.Errorf("error listing applied migrations: %w", err)
	}
	applied := make(map[int]bool, len(versions))
	for _, v := range versions {
		applied[v] = true
	}
	return applied, nil
}
