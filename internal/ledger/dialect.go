package ledger

import (
	"embed"
	"fmt"
	"time"
)

//go:embed queries/*/*.sql migrations/*/*.sql
var sqlFiles embed.FS

// dialect is everything that differs between the backends. The SQL differs
// in its own files; in Go only the encoding of times does. Its files are
// parsed once, when the store opens.
type dialect struct {
	// name is also the directory of the dialect's queries and migrations.
	name       string
	queries    queries
	migrations []migration
	// timeArg encodes a Go time as the dialect stores it.
	timeArg func(time.Time) any
	// writeCTEs is set when one statement may write several tables
	// (PostgreSQL's data-modifying CTEs), so a write spanning them costs
	// one round trip; SQLite runs such writes as a transaction of single
	// statements, whose round trips are in-process.
	writeCTEs bool
}

const (
	dialectPostgres = "postgres"
	dialectSQLite   = "sqlite"
)

// sqliteTimeLayout is fixed-width, unlike RFC 3339 with trimmed fractions,
// so that SQLite comparing two stored times as strings compares instants.
// It matches strftime('%Y-%m-%dT%H:%M:%fZ'), which stamps the times SQLite
// makes itself.
const sqliteTimeLayout = "2006-01-02T15:04:05.000Z"

func newDialect(name string) (dialect, error) {
	q, err := loadQueries(sqlFiles, "queries/"+name)
	if err != nil {
		return dialect{}, err
	}
	m, err := loadMigrations(sqlFiles, "migrations/"+name)
	if err != nil {
		return dialect{}, err
	}
	d := dialect{name: name, queries: q, migrations: m}
	switch name {
	case dialectPostgres:
		d.timeArg = func(t time.Time) any { return t.UTC() }
		d.writeCTEs = true
	case dialectSQLite:
		d.timeArg = func(t time.Time) any { return t.UTC().Format(sqliteTimeLayout) }
	default:
		return dialect{}, fmt.Errorf("unknown dialect %q", name)
	}
	return d, nil
}
