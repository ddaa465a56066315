package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Pool limits for PostgreSQL. database/sql's defaults (unbounded open
// connections, two idle) would let a burst of claims exhaust the server's
// max_connections and then churn connections once it passes.
const (
	postgresMaxConns        = 16
	postgresConnMaxIdleTime = 5 * time.Minute
)

// sqliteBusyTimeout is how long SQLite waits for another process holding
// the write lock (a CLI next to the dev server, say) before giving up.
const sqliteBusyTimeout = 10 * time.Second

// ledger is the one Store implementation. Both backends speak database/sql;
// what differs between them lives in the dialect.
type ledger struct {
	db *sql.DB
	// conn runs statements outside a transaction: reads on readers where
	// the backend has them, everything else on db.
	conn *router
	// readDB is the SQLite readers' pool; nil on PostgreSQL.
	readDB *sql.DB
	dialect
	// serviceRole is set when every connection runs as the PostgreSQL
	// service role, which may not migrate.
	serviceRole string
}

var _ Store = (*ledger)(nil)

// OpenPostgres opens the ledger on PostgreSQL. dsn is a pgx connection
// string, URL or keyword/value; parameters pgx does not know, such as
// search_path, are passed to the server as runtime parameters. It does not
// migrate: call Migrate.
func OpenPostgres(ctx context.Context, dsn string) (Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("error parsing PostgreSQL connection string: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	configurePostgresPool(db)
	return open(ctx, db, nil, dialectPostgres)
}

func configurePostgresPool(db *sql.DB) {
	db.SetMaxOpenConns(postgresMaxConns)
	db.SetMaxIdleConns(postgresMaxConns)
	db.SetConnMaxIdleTime(postgresConnMaxIdleTime)
}

// OpenSQLite opens the ledger in the SQLite database file at path, creating
// the file if needed. It does not migrate: call Migrate.
func OpenSQLite(ctx context.Context, path string) (Store, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("error opening SQLite: invalid database path %q", path)
	}
	params := url.Values{}
	params.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeout.Milliseconds()))
	// WAL lets readers in other processes proceed while the store writes.
	// synchronous stays at its default, FULL: a committed claim that a power
	// cut could roll back would let the same effect run twice.
	params.Add("_pragma", "journal_mode(wal)")
	params.Add("_pragma", "foreign_keys(1)")
	// Every transaction here writes, so take the write lock at BEGIN: a
	// transaction that reads first and upgrades later can fail with
	// SQLITE_BUSY without ever waiting out the busy timeout.
	params.Set("_txlock", "immediate")

	db, err := sql.Open("sqlite", path+"?"+params.Encode())
	if err != nil {
		return nil, fmt.Errorf("error opening SQLite: %w", err)
	}
	// SQLite has one writer at a time anyway; a single connection makes
	// this process's writers queue in database/sql rather than spin on the
	// file lock.
	db.SetMaxOpenConns(1)
	// Readers refuse to write, so a statement routed to them by mistake
	// fails loudly instead of racing the writer for the lock.
	params.Add("_pragma", "query_only(1)")
	params.Del("_txlock")
	read, err := sql.Open("sqlite", path+"?"+params.Encode())
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("error opening SQLite readers: %w", err)
	}
	read.SetMaxOpenConns(sqliteReadConns)
	read.SetMaxIdleConns(sqliteReadConns)
	return open(ctx, db, read, dialectSQLite)
}

// open checks both pools answer; read is nil where db serves reads too.
func open(ctx context.Context, db, read *sql.DB, dialectName string) (Store, error) {
	closeAll := func() {
		_ = db.Close()
		if read != nil {
			_ = read.Close()
		}
	}
	d, err := newDialect(dialectName)
	if err != nil {
		closeAll()
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		closeAll()
		return nil, fmt.Errorf("error connecting to %s: %w", dialectName, err)
	}
	readers := db
	if read != nil {
		readers = read
	}
	return &ledger{db: db, readDB: read, conn: newRouter(db, readers, d.queries), dialect: d}, nil
}

func (l *ledger) Ping(ctx context.Context) error {
	if err := l.db.PingContext(ctx); err != nil {
		return fmt.Errorf("error reaching the ledger: %w", err)
	}
	return nil
}

func (l *ledger) Close() error {
	err := l.db.Close()
	if l.readDB != nil {
		err = errors.Join(err, l.readDB.Close())
	}
	if err != nil {
		return fmt.Errorf("error closing the ledger: %w", err)
	}
	return nil
}

// query returns the SQL of the named query in this ledger's dialect.
func (l *ledger) query(name string) string {
	return l.queries.get(name)
}
