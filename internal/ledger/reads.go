package ledger

import (
	"context"
	"database/sql"
	"strings"
)

// sqliteReadConns is how many connections serve plain reads on SQLite.
// Under WAL a reader sees the last commit without waiting for the writer,
// so a call's reads need not queue behind other calls' commits (ADR 8).
const sqliteReadConns = 4

// router is the querier the ledger's statements outside a transaction go
// through. It sends the statements that only read to readers and every
// other one, such as an INSERT … RETURNING, to the writer. On PostgreSQL
// both are one pool.
type router struct {
	write, read *sql.DB
	// reads holds the text of every query that only reads.
	reads map[string]bool
}

func newRouter(write, read *sql.DB, q queries) *router {
	r := &router{write: write, read: read, reads: map[string]bool{}}
	for _, text := range q {
		if readOnly(text) {
			r.reads[text] = true
		}
	}
	return r
}

// readOnly reports a plain SELECT: no row lock, no write.
func readOnly(text string) bool {
	var body []string
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "--") {
			body = append(body, t)
		}
	}
	stmt := strings.ToUpper(strings.Join(body, " "))
	return strings.HasPrefix(stmt, "SELECT ") && !strings.Contains(stmt, " FOR UPDATE") && !strings.Contains(stmt, " FOR SHARE")
}

func (r *router) pick(query string) *sql.DB {
	if r.reads[query] {
		return r.read
	}
	return r.write
}

func (r *router) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.write.ExecContext(ctx, query, args...)
}

func (r *router) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.pick(query).QueryContext(ctx, query, args...)
}

func (r *router) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.pick(query).QueryRowContext(ctx, query, args...)
}
