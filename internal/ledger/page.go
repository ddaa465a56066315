package ledger

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// MaxPageLimit is the most rows one page of a listing returns: a page is
// for a person or a script to read, and past this a narrower filter serves
// them better than a longer page.
const MaxPageLimit = 500

// DefaultPageLimit is a page's length when the caller names none.
const DefaultPageLimit = 50

// ErrBadCursor is returned for a cursor this ledger did not make.
var ErrBadCursor = errors.New("not a cursor this listing returned")

// Cursor is a position in a listing: the sort key of the last row a page
// returned. Listings are ordered by (Rank, At, Key), each in the listing's
// direction, so a page that starts after a cursor neither repeats nor skips
// a row that existed when the cursor was made, however many rows are
// inserted meanwhile.
type Cursor struct {
	// Rank orders groups within a listing (reconciliations list held
	// post-call work, then held money, then other held effects, then
	// undelivered messages). Zero elsewhere.
	Rank int `json:"r,omitempty"`
	// At is the row's sort time, usually its creation.
	At time.Time `json:"t"`
	// Key breaks ties at one time: the row's ID.
	Key string `json:"k"`
}

// String encodes the cursor for a client, who should treat it as opaque.
func (c Cursor) String() string {
	b, _ := json.Marshal(c) // a struct of a time, an int and a string always encodes
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor reads a cursor String made.
func ParseCursor(s string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	var c Cursor
	if err := json.Unmarshal(b, &c); err != nil || c.At.IsZero() || c.Key == "" || c.Rank < 0 {
		return Cursor{}, ErrBadCursor
	}
	c.At = c.At.UTC()
	return c, nil
}

// PageQuery selects one page of a listing. Every filter is optional; an
// empty one matches every row.
type PageQuery struct {
	// Status matches the row's status (state, for sessions; code, for
	// refusals).
	Status string
	// Tool matches the tool called (for sessions, any call of the
	// session's).
	Tool string
	// AgentID matches the agent whose call the row came from.
	AgentID string
	// NewerThan keeps rows whose sort time is at or after it.
	NewerThan *time.Time
	// OlderThan keeps rows whose sort time is before it.
	OlderThan *time.Time
	// After starts the page after this position. Optional: default the
	// listing's first row.
	After *Cursor
	// Limit is the page's length. Optional: default DefaultPageLimit;
	// capped at MaxPageLimit.
	Limit int
}

func (q PageQuery) limit() int {
	switch {
	case q.Limit <= 0:
		return DefaultPageLimit
	case q.Limit > MaxPageLimit:
		return MaxPageLimit
	}
	return q.Limit
}

// Page is one page of a listing.
type Page[T any] struct {
	Items []T
	// Total counts every row the query's filters match, on every page.
	Total int
	// Next is where the following page starts; nil on the last page.
	Next *Cursor
}

// pageOf trims rows fetched with one extra to the page's length: the extra
// row's presence is what says another page follows.
func pageOf[T any](rows []T, limit, total int, cursorOf func(T) Cursor) Page[T] {
	p := Page[T]{Items: rows, Total: total}
	if len(rows) > limit {
		p.Items = rows[:limit]
		next := cursorOf(rows[limit-1])
		p.Next = &next
	}
	return p
}

// pageArgs are the filter arguments every page and count query takes
// first, as $1…$5: status, tool, agent, newer than, older than.
func (l *ledger) pageArgs(q PageQuery) []any {
	return []any{q.Status, q.Tool, q.AgentID, l.nullTimeArg(q.NewerThan), l.nullTimeArg(q.OlderThan)}
}

// afterArgs are the cursor's arguments, $6…$8 of a page query after the
// filters: rank, time and key, all NULL for the first page.
func (l *ledger) afterArgs(q PageQuery) []any {
	if q.After == nil {
		return []any{nil, nil, nil}
	}
	return []any{q.After.Rank, l.timeArg(q.After.At), q.After.Key}
}

// page runs a listing's count and page queries with q's filters and the
// cursor's arguments after.
func page[T any](ctx context.Context, l *ledger, q PageQuery, after []any, scan func(rowScanner) (T, error), pageQuery, countQuery string, cursorOf func(T) Cursor) (Page[T], error) {
	var total int
	if err := l.conn.QueryRowContext(ctx, l.query(countQuery), l.pageArgs(q)...).Scan(&total); err != nil {
		return Page[T]{}, fmt.Errorf("error counting: %w", err)
	}
	args := append(l.pageArgs(q), after...)
	args = append(args, q.limit()+1)
	rows, err := queryAll(ctx, l.conn, scan, l.query(pageQuery), args...)
	if err != nil {
		return Page[T]{}, fmt.Errorf("error reading the page: %w", err)
	}
	return pageOf(rows, q.limit(), total, cursorOf), nil
}
