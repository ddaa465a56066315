package ledger

import (
	"bufio"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// queryHeader introduces a query in a .sql file; the query runs until the
// next header or the end of the file.
var queryHeader = regexp.MustCompile(`^--\s*name:\s*([A-Za-z][A-Za-z0-9]*)\s*$`)

// queries maps a query name to its SQL for one dialect.
type queries map[string]string

// get returns the named query. Every name is checked against both dialects
// by the tests, so a miss here is a programming error, not a runtime
// condition worth an error return at every call site.
func (q queries) get(name string) string {
	sql, ok := q[name]
	if !ok {
		panic(fmt.Sprintf("store: no query named %q", name))
	}
	return sql
}

// loadQueries reads every .sql file in dir of fsys.
func loadQueries(fsys fs.FS, dir string) (queries, error) {
	files, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, fmt.Errorf("error listing queries in %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("error loading queries: no .sql files in %s", dir)
	}
	q := queries{}
	for _, file := range files {
		text, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("error reading %s: %w", file, err)
		}
		if err := q.parse(file, string(text)); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// parse adds the queries of one file. Text before the first header may only
// be comments, so SQL cannot silently fall outside every query.
func (q queries) parse(file, text string) error {
	var (
		name string
		body strings.Builder
	)
	flush := func() error {
		if name == "" {
			return nil
		}
		sql := strings.TrimSpace(body.String())
		if sql == "" {
			return fmt.Errorf("error parsing %s: query %s is empty", file, name)
		}
		if _, dup := q[name]; dup {
			return fmt.Errorf("error parsing %s: query %s is defined twice", file, name)
		}
		q[name] = sql
		body.Reset()
		return nil
	}

	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := queryHeader.FindStringSubmatch(line); m != nil {
			if err := flush(); err != nil {
				return err
			}
			name = m[1]
			continue
		}
		if name == "" {
			if trimmed := strings.TrimSpace(line); trimmed != "" && !strings.HasPrefix(trimmed, "--") {
				return fmt.Errorf("error parsing %s:%d: SQL before the first \"-- name:\" header", file, n)
			}
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("error parsing %s: %w", file, err)
	}
	return flush()
}
