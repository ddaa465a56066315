package devtemporal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	postgresplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

// The server module's own schema directories, applied by its own schema
// tool, so the databases match what its SQL tooling produces in production.
const (
	temporalSchema   = "postgresql/v12/temporal"
	visibilitySchema = "postgresql/v12/visibility"
)

// dbName keeps database names to what the schema tool can use unquoted.
var dbName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Postgres keeps the server's state in PostgreSQL: history in one database,
// visibility in another, both created and migrated on start.
type Postgres struct {
	// URL is a postgres:// URL for the PostgreSQL server. Its database is
	// the one connected to while creating the two below. Required.
	URL string
	// Database holds history, executions and namespaces. Optional: default
	// "temporal".
	Database string
	// VisibilityDatabase holds the visibility store. Optional: default
	// "temporal_visibility".
	VisibilityDatabase string
	// Shards is the number of history shards. It is fixed when the database
	// is created; a later start with another count fails. Optional: default 4.
	Shards int
}

// WithDefaults returns p with every unset optional field filled in.
func (p Postgres) WithDefaults() Postgres {
	if p.Database == "" {
		p.Database = "temporal"
	}
	if p.VisibilityDatabase == "" {
		p.VisibilityDatabase = "temporal_visibility"
	}
	if p.Shards == 0 {
		p.Shards = 4
	}
	return p
}

func (p Postgres) validate() error {
	if _, err := p.sql(""); err != nil {
		return err
	}
	for _, name := range []string{p.Database, p.VisibilityDatabase} {
		if !dbName.MatchString(name) {
			return fmt.Errorf("database name %q must be lower-case letters, digits and underscores", name)
		}
	}
	if p.Database == p.VisibilityDatabase {
		return errors.New("history and visibility need separate databases")
	}
	if p.Shards < 1 {
		return fmt.Errorf("shards must be at least 1, got %d", p.Shards)
	}
	return nil
}

// sql returns the server's connection settings for database, or for the
// URL's own database when database is empty.
func (p Postgres) sql(database string) (*config.SQL, error) {
	u, err := url.Parse(p.URL)
	if err != nil {
		return nil, fmt.Errorf("error parsing PostgreSQL URL: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("PostgreSQL URL must start with postgres://, got scheme %q", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("PostgreSQL URL names no host")
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	if database == "" {
		database = strings.TrimPrefix(u.Path, "/")
	}
	if database == "" {
		database = "postgres"
	}
	password, _ := u.User.Password()
	attrs := map[string]string{}
	for k, v := range u.Query() {
		attrs[k] = v[0]
	}
	return &config.SQL{
		// The pgx driver, the one the ledger uses too.
		PluginName:        postgresplugin.PluginNamePGX,
		ConnectAddr:       net.JoinHostPort(u.Hostname(), port),
		ConnectProtocol:   "tcp",
		User:              u.User.Username(),
		Password:          password,
		DatabaseName:      database,
		ConnectAttributes: attrs,
		// A few connections per service are plenty on one host, and keep
		// several test servers within PostgreSQL's connection limit.
		MaxConns:     20,
		MaxIdleConns: 20,
	}, nil
}

// openPostgres creates the two databases if they are missing and brings
// their schemas to the versions this server module ships, returning the
// history and visibility connection settings.
func openPostgres(p Postgres, logger log.Logger) (history, visibility *config.SQL, err error) {
	history, err = preparePostgresDB(p, p.Database, temporalSchema, logger)
	if err != nil {
		return nil, nil, err
	}
	visibility, err = preparePostgresDB(p, p.VisibilityDatabase, visibilitySchema, logger)
	if err != nil {
		return nil, nil, err
	}
	return history, visibility, nil
}

func preparePostgresDB(p Postgres, database, schemaName string, logger log.Logger) (*config.SQL, error) {
	admin, err := p.sql("")
	if err != nil {
		return nil, err
	}
	admin.DatabaseName = database
	if err := sqltool.DoCreateDatabase(admin, maintenanceDB(p), logger); err != nil && !isDuplicateDatabase(err) {
		return nil, fmt.Errorf("error creating database %s: %w", database, err)
	}
	cfg, err := p.sql(database)
	if err != nil {
		return nil, err
	}
	conn, err := sqltool.NewConnection(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("error connecting to database %s: %w", database, err)
	}
	defer conn.Close()
	// The documented procedure: version tables at 0.0, then every versioned
	// step up to the newest. On a database already current both are no-ops.
	setup := schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, logger)
	if err := setup.Run(); err != nil {
		return nil, fmt.Errorf("error setting up schema versioning in %s: %w", database, err)
	}
	update := schema.NewUpdateSchemaTask(conn, &schema.UpdateConfig{DBName: database, SchemaName: schemaName}, logger)
	if err := update.Run(); err != nil {
		return nil, fmt.Errorf("error updating schema in %s: %w", database, err)
	}
	return cfg, nil
}

// DropPostgres drops the two databases p names, for tests and rehearsals
// that start from nothing. The server using them must be stopped first;
// connections its pools still hold are ended (PostgreSQL 13 or later).
func DropPostgres(ctx context.Context, p Postgres) error {
	p = p.WithDefaults()
	if err := p.validate(); err != nil {
		return fmt.Errorf("error validating PostgreSQL settings: %w", err)
	}
	conn, err := pgx.Connect(ctx, p.URL)
	if err != nil {
		return fmt.Errorf("error connecting to PostgreSQL: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var errs []error
	for _, database := range []string{p.Database, p.VisibilityDatabase} {
		// The name is checked by validate, so quoting it is enough.
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{database}.Sanitize()+" WITH (FORCE)"); err != nil {
			errs = append(errs, fmt.Errorf("error dropping database %s: %w", database, err))
		}
	}
	return errors.Join(errs...)
}

// maintenanceDB is the database connected to while creating or dropping
// the others: the URL's own.
func maintenanceDB(p Postgres) string {
	cfg, _ := p.sql("")
	return cfg.DatabaseName
}

// duplicateDatabase is PostgreSQL's SQLSTATE for a database that exists.
const duplicateDatabase = "42P04"

// isDuplicateDatabase reports PostgreSQL's duplicate_database, which a
// start against existing databases meets.
func isDuplicateDatabase(err error) bool {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pgErr.Code == duplicateDatabase
}
