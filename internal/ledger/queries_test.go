package ledger

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func TestDialectsDefineTheSameQueries(t *testing.T) {
	t.Parallel()

	pg, err := newDialect(dialectPostgres)
	require.NoError(t, err)
	lite, err := newDialect(dialectSQLite)
	require.NoError(t, err)

	// A …CTE query is PostgreSQL's one statement for writes SQLite makes
	// as a transaction of the queries both dialects define.
	var shared []string
	for name := range pg.queries {
		if !strings.HasSuffix(name, "CTE") {
			shared = append(shared, name)
		}
	}
	slices.Sort(shared)
	require.Equal(t, shared, slices.Sorted(maps.Keys(lite.queries)))
}

func TestDialectsDefineTheSameMigrations(t *testing.T) {
	t.Parallel()

	names := func(d dialect) []string {
		var out []string
		for _, m := range d.migrations {
			out = append(out, m.name)
		}
		return out
	}
	pg, err := newDialect(dialectPostgres)
	require.NoError(t, err)
	lite, err := newDialect(dialectSQLite)
	require.NoError(t, err)

	require.NotEmpty(t, pg.migrations)
	require.Equal(t, names(pg), names(lite))
}

func TestLoadQueries(t *testing.T) {
	t.Parallel()

	load := func(text string) (queries, error) {
		return loadQueries(fstest.MapFS{"q/a.sql": {Data: []byte(text)}}, "q")
	}

	t.Run("Parses", func(t *testing.T) {
		t.Parallel()
		q, err := load("-- header comment\n\n-- name: ThingGet\n-- why\nSELECT 1;\n\n-- name: ThingList\nSELECT 2;\n")
		require.NoError(t, err)
		require.Equal(t, queries{"ThingGet": "-- why\nSELECT 1;", "ThingList": "SELECT 2;"}, q)
		require.Equal(t, "SELECT 2;", q.get("ThingList"))
		require.Panics(t, func() { q.get("ThingMissing") })
	})

	for name, text := range map[string]string{
		"SQL before the first header": "SELECT 0;\n-- name: ThingGet\nSELECT 1;\n",
		"duplicate name":              "-- name: ThingGet\nSELECT 1;\n-- name: ThingGet\nSELECT 2;\n",
		"empty query":                 "-- name: ThingGet\n\n-- name: ThingList\nSELECT 2;\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := load(text)
			require.Error(t, err)
		})
	}
}

func TestLoadMigrations(t *testing.T) {
	t.Parallel()

	for name, files := range map[string][]string{
		"gap":       {"001_a.sql", "003_c.sql"},
		"duplicate": {"001_a.sql", "001_b.sql"},
		"bad name":  {"001_a.sql", "2_b.sql"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fsys := fstest.MapFS{}
			for _, f := range files {
				fsys["m/"+f] = &fstest.MapFile{Data: []byte("SELECT 1;")}
			}
			_, err := loadMigrations(fsys, "m")
			require.Error(t, err)
		})
	}
}
