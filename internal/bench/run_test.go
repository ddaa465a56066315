package bench_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/bench"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
)

// TestRunWritesResults runs every scenario with a couple of calls per cell
// on one embedded stack and checks what a run leaves behind: a table, a
// CSV file with a row per cell and a well-formed chart.
func TestRunWritesResults(t *testing.T) {
	dir := t.TempDir()
	var out, progress bytes.Buffer
	err := bench.Run(t.Context(), bench.Config{
		Concurrency:     []int{1, 2},
		Calls:           []int{2, 2},
		CallsPerSession: 2,
		OutDir:          dir,
		DataDir:         t.TempDir(),
		Out:             &out,
		Progress:        &progress,
	})
	require.NoError(t, err, progress.String())

	rows := readCSV(t, filepath.Join(dir, "bench.csv"))
	require.NotEmpty(t, rows)
	scenarios := map[string]int{}
	for _, r := range rows {
		scenarios[r["scenario"]]++
		require.Equal(t, "0", r["failed"], r["scenario"])
		require.Positive(t, number(t, r["p50_ms"]), r["scenario"])
		require.Positive(t, number(t, r["throughput_per_s"]), r["scenario"])
		require.LessOrEqual(t, number(t, r["p50_ms"]), number(t, r["p99_ms"]), r["scenario"])
		switch r["path"] {
		case "direct":
			require.Zero(t, number(t, r["events_per_call"]), "a direct call runs no workflow")
			require.Empty(t, r["workflow_p50_ms"])
		case "maestro":
			require.Positive(t, number(t, r["events_per_call"]), r["scenario"])
			require.Positive(t, number(t, r["session_events_per_call"]), "maestro records every call in its session")
			require.NotEmpty(t, r["baseline_path"], r["scenario"])
			require.Positive(t, number(t, r["p50_vs_baseline"]), r["scenario"])
			require.Positive(t, number(t, r["p50_vs_temporal"]), r["scenario"])
			require.Positive(t, number(t, r["p50_vs_direct"]), r["scenario"])
			require.Empty(t, r["ledger_round_trips_per_call"], "a SQLite ledger's round trips are not counted")
		default:
			require.Positive(t, number(t, r["events_per_call"]), r["scenario"])
			require.Empty(t, r["session_events_per_call"], "a bare workflow has no session")
		}
		require.Contains(t, out.String(), r["scenario"], "the table lists every scenario")
	}
	for _, want := range []string{"direct/read", "temporal/read", "temporal+eager/read", "temporal+local/read",
		"temporal+eager+local/read", "temporal+update/read", "maestro/read",
		"temporal+eager/real-sync", "maestro/real-sync", "temporal+eager/compensable", "maestro/compensable",
		"temporal+signal/approval", "maestro/approval"} {
		require.Equal(t, 2, scenarios[want], "%s should have a row per concurrency", want)
	}
	require.Contains(t, out.String(), "p50 ratios")
	require.Contains(t, out.String(), "Ledger round trips per call: not counted")

	// The goal table comes last, and every goal it judges is in its files.
	goalsAt := strings.Index(out.String(), "Goals (0: the bar")
	require.Greater(t, goalsAt, strings.Index(out.String(), "p50 ratios"), "the goal table follows the other tables")
	goals := readCSV(t, filepath.Join(dir, "goals.csv"))
	statuses := map[string]int{}
	for _, g := range goals {
		statuses[g["status"]]++
		require.Contains(t, []string{"PASS", "FAIL", "not measured"}, g["status"])
		if g["goal"] == "1 latency p50" && g["concurrency"] == "1" {
			require.NotEqual(t, "not measured", g["status"], "both sides ran at one caller")
		}
		if g["concurrency"] == "64" {
			require.Equal(t, "not measured", g["status"], "no cell ran at 64 callers")
		}
	}
	require.Positive(t, statuses["not measured"])
	md, err := os.ReadFile(filepath.Join(dir, "goals.md"))
	require.NoError(t, err)
	require.Equal(t, len(goals), strings.Count(string(md), "\n| ")-1, "one markdown row per goal, below the header")

	bars := checkSVG(t, filepath.Join(dir, "latency.svg"))
	require.Equal(t, 3*len(rows), bars, "one bar per percentile per cell")
	require.FileExists(t, filepath.Join(dir, "histories.txt"))
}

// TestRunOnPostgres runs maestro's ledger and Temporal on PostgreSQL:
// the ledger's round trips are counted, and the ledger's schema and
// Temporal's databases are gone after the run.
func TestRunOnPostgres(t *testing.T) {
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = ledgertest.DefaultDatabaseURL
	}
	before := benchLeftovers(t, base)
	dir := t.TempDir()
	var out, progress bytes.Buffer
	err := bench.Run(t.Context(), bench.Config{
		Concurrency:         []int{1},
		Calls:               []int{2},
		Only:                []string{"maestro/read", "temporal+eager+local/read"},
		OutDir:              dir,
		DataDir:             t.TempDir(),
		DatabaseURL:         base,
		TemporalDatabaseURL: base,
		TemporalShards:      2,
		Out:                 &out,
		Progress:            &progress,
	})
	require.NoError(t, err, progress.String())
	require.Contains(t, progress.String(), "Temporal on PostgreSQL with 2 history shards")
	require.Equal(t, before, benchLeftovers(t, base), "the run drops the schema and databases it created")

	rows := readCSV(t, filepath.Join(dir, "bench.csv"))
	require.Len(t, rows, 2)
	for _, r := range rows {
		if r["path"] == "maestro" {
			require.Positive(t, number(t, r["ledger_round_trips_per_call"]), "a maestro call reads and writes its ledger")
			require.Positive(t, number(t, r["ledger_statements_per_call"]))
			require.Positive(t, number(t, r["ledger_transactions_per_call"]))
		}
	}
	require.Contains(t, out.String(), "Ledger work per maestro call")
}

// benchLeftovers lists the databases and schemas named like the bench's
// own.
func benchLeftovers(t *testing.T, base string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), base)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `
		SELECT 'database ' || datname FROM pg_database WHERE datname LIKE 'maestro\_bench\_%'
		UNION ALL
		SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname LIKE 'maestro\_bench\_%'
		ORDER BY 1`)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return names
}

// readCSV reads a CSV file into rows keyed by the header.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(records), 2, "a header and at least one row")
	var rows []map[string]string
	for _, rec := range records[1:] {
		row := map[string]string{}
		for i, name := range records[0] {
			row[name] = rec[i]
		}
		rows = append(rows, row)
	}
	return rows
}

func number(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	return f
}

// checkSVG parses the chart as XML, checks its root and returns how many
// bars it draws (the rects carrying a tooltip).
func checkSVG(t *testing.T, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := xml.NewDecoder(bytes.NewReader(raw))
	var root string
	depth, bars := 0, 0
	var stack []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the chart must be well-formed XML")
		switch el := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				root = el.Name.Local
			}
			if el.Name.Local == "title" && len(stack) > 0 && stack[len(stack)-1] == "rect" {
				bars++
			}
			stack = append(stack, el.Name.Local)
			depth++
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			depth--
		}
	}
	require.Equal(t, "svg", root)
	require.Zero(t, depth, "every element is closed")
	require.True(t, strings.HasPrefix(string(raw), "<svg "), "the file starts with the svg element")
	return bars
}
