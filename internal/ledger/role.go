package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// DefaultServiceRole is the PostgreSQL role the service runs as unless
// configured otherwise.
const DefaultServiceRole = "maestro_service"

var roleName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// ErrNotMigrated is returned by Migrate on a ledger opened as the service
// role when the schema lacks migrations: only the owner may apply them.
var ErrNotMigrated = errors.New("the ledger schema is not fully migrated, and the service role may not migrate it")

// serviceRoleGrants gives role what the service needs in the current
// schema and no more: every DML statement on the ledger's tables except
// UPDATE, DELETE and TRUNCATE on approval_events, tool_registry_versions,
// catalog_versions and catalog_activations, so approval history, the
// classifications the audit judges past effects by and the catalog files
// past calls ran under cannot be rewritten even with maestro's own
// connections, and read-only
// schema_migrations. It runs as the schema's owner after every migration,
// so tables a later migration adds are covered. Identifiers cannot be bind
// parameters, so the role travels in a transaction-local setting and the
// statements are built with format('%I'). It is PostgreSQL only, and runs
// under the migration lock so concurrent starts do not interleave.
const serviceRoleGrants = `
DO $$
DECLARE
    svc    text := current_setting('maestro.service_role');
    schema text := current_schema();
BEGIN
    BEGIN
        EXECUTE format('CREATE ROLE %I NOLOGIN', svc);
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL; -- created by an earlier start, or a concurrent one
    END;
    IF NOT pg_has_role(current_user, svc, 'MEMBER') THEN
        EXECUTE format('GRANT %I TO %I', svc, current_user);
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', schema, svc);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO %I', schema, svc);
    EXECUTE format('GRANT USAGE ON ALL SEQUENCES IN SCHEMA %I TO %I', schema, svc);
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON %I.approval_events FROM %I', schema, svc);
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON %I.tool_registry_versions FROM %I', schema, svc);
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON %I.catalog_versions FROM %I', schema, svc);
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON %I.catalog_activations FROM %I', schema, svc);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %I.schema_migrations FROM %I', schema, svc);
END
$$`

// OpenPostgresService opens the ledger the way the service runs on
// PostgreSQL: it migrates as the role dsn logs in as (the schema's owner),
// grants serviceRole its privileges in the schema search_path selects
// (creating the role if needed), and returns a ledger whose every pooled
// connection runs SET ROLE serviceRole. The owner connection is closed
// before it returns.
func OpenPostgresService(ctx context.Context, dsn, serviceRole string) (Store, error) {
	if !roleName.MatchString(serviceRole) {
		return nil, fmt.Errorf("error opening the ledger: service role %q must be 1-63 lowercase letters, digits or _, not starting with a digit", serviceRole)
	}
	owner, err := OpenPostgres(ctx, dsn)
	if err != nil {
		return nil, err
	}
	err = owner.Migrate(ctx)
	if err == nil {
		err = owner.(*ledger).grantServiceRole(ctx, serviceRole)
	}
	if cerr := owner.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}

	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("error parsing PostgreSQL connection string: %w", err)
	}
	setRole := "SET ROLE " + pgx.Identifier{serviceRole}.Sanitize()
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error {
		if _, err := c.Exec(ctx, setRole); err != nil {
			return fmt.Errorf("error switching to the service role %s: %w", serviceRole, err)
		}
		return nil
	}))
	configurePostgresPool(db)
	s, err := open(ctx, db, nil, dialectPostgres)
	if err != nil {
		return nil, err
	}
	s.(*ledger).serviceRole = serviceRole
	return s, nil
}

// grantAttempts bounds retries of the grants after a deadlock: GRANT locks
// the role, which every schema served by the same role shares, so two
// processes setting up different schemas at once can deadlock, and
// PostgreSQL then aborts one of them.
const grantAttempts = 5

func (l *ledger) grantServiceRole(ctx context.Context, role string) error {
	var err error
	for range grantAttempts {
		if err = l.grantServiceRoleOnce(ctx, role); !isDeadlock(err) {
			break
		}
	}
	return err
}

func isDeadlock(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40P01"
}

func (l *ledger) grantServiceRoleOnce(ctx context.Context, role string) error {
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, l.query("MigrationLock")); err != nil {
			return fmt.Errorf("error taking the migration lock: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "SELECT set_config('maestro.service_role', $1, true)", role); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, serviceRoleGrants)
		return err
	})
	if err != nil {
		return fmt.Errorf("error granting the service role %s its privileges: %w", role, err)
	}
	return nil
}

// checkMigrated stands in for Migrate on a ledger opened as the service
// role, which may read schema_migrations but not change the schema.
func (l *ledger) checkMigrated(ctx context.Context) error {
	applied, err := l.appliedVersions(ctx, l.conn)
	if err != nil {
		return err
	}
	for _, m := range l.migrations {
		if !applied[m.version] {
			return fmt.Errorf("error checking migration %03d_%s: %w", m.version, m.name, ErrNotMigrated)
		}
	}
	return nil
}
