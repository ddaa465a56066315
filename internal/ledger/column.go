package ledger

import (
	"fmt"
	"time"
)

// textArg stores optional text: empty is NULL, so that "IS NOT NULL" in a
// constraint means "given".
func textArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// textCol scans optional text; NULL becomes "".
type textCol struct{ dst *string }

func (c textCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.dst = ""
	case string:
		*c.dst = v
	case []byte:
		*c.dst = string(v)
	default:
		return fmt.Errorf("cannot scan %T into text", src)
	}
	return nil
}

// nullTimeArg stores an optional time: nil is NULL.
func (d dialect) nullTimeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return d.timeArg(*t)
}

// timeCol scans a timestamp from either backend: pgx yields time.Time,
// SQLite yields the TEXT the store wrote. Times come back in UTC.
type timeCol struct{ dst *time.Time }

func (c timeCol) Scan(src any) error {
	t, err := scanTime(src)
	if err != nil {
		return err
	}
	*c.dst = t
	return nil
}

// nullTimeCol scans an optional timestamp; NULL becomes nil.
type nullTimeCol struct{ dst **time.Time }

func (c nullTimeCol) Scan(src any) error {
	if src == nil {
		*c.dst = nil
		return nil
	}
	t, err := scanTime(src)
	if err != nil {
		return err
	}
	*c.dst = &t
	return nil
}

func scanTime(src any) (time.Time, error) {
	var text string
	switch v := src.(type) {
	case time.Time:
		return v.UTC(), nil
	case string:
		text = v
	case []byte:
		text = string(v)
	default:
		return time.Time{}, fmt.Errorf("cannot scan %T into a time", src)
	}
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return time.Time{}, fmt.Errorf("error parsing stored time: %w", err)
	}
	return t.UTC(), nil
}
