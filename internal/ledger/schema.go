package ledger

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SchemaCreate creates an empty schema on the server dsn reaches and
// returns a connection string whose search_path selects it, so that a
// ledger opened with it shares the database with nothing else. Tests and
// the benchmark use it; SchemaDrop removes the schema again. name must be
// a plain identifier.
func SchemaCreate(ctx context.Context, dsn, name string) (string, error) {
	scoped, err := withSearchPath(dsn, name)
	if err != nil {
		return "", err
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", fmt.Errorf("error connecting to PostgreSQL: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("error creating schema %s: %w", name, err)
	}
	return scoped, nil
}

// SchemaDrop drops a schema SchemaCreate made, with everything in it.
func SchemaDrop(ctx context.Context, dsn, name string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("error connecting to PostgreSQL to drop schema %s: %w", name, err)
	}
	defer conn.Close(context.Background())
	// Dropping privileges granted to a role other schemas share can
	// deadlock with a concurrent grant; PostgreSQL aborts one side, and the
	// drop is simply tried again.
	for attempt := 1; ; attempt++ {
		_, err = conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{name}.Sanitize()+" CASCADE")
		var pgErr *pgconn.PgError
		if attempt < 5 && errors.As(err, &pgErr) && pgErr.Code == "40P01" {
			continue
		}
		if err != nil {
			return fmt.Errorf("error dropping schema %s: %w", name, err)
		}
		return nil
	}
}

// withSearchPath adds search_path to a connection string in either of the
// forms pgx accepts.
func withSearchPath(dsn, schema string) (string, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " search_path=" + schema, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("error parsing PostgreSQL connection string: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
