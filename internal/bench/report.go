package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The files a run writes into its output directory.
const (
	csvFile       = "bench.csv"
	chartFile     = "latency.svg"
	historiesFile = "histories.txt"
	goalsCSVFile  = "goals.csv"
	goalsMDFile   = "goals.md"
)

// report is a run's results with the comparisons drawn from them.
type report struct {
	results []result
	ratios  []ratio
	goals   []goal
	// ledgerCounted says the ledger's round trips were counted: only a
	// PostgreSQL ledger's are.
	ledgerCounted bool
	// ownLedger is each route's own ledger work per call, from the ledger
	// pass; nil when it did not run.
	ownLedger map[string]ledgerPerCall
}

// ratio compares maestro's p50 with the floors for one op at one
// concurrency.
type ratio struct {
	op          string
	concurrency int
	maestro     time.Duration
	// baseline is the matched bare baseline's, run on baselinePath.
	baseline     time.Duration
	baselinePath string
	temporal     time.Duration
	direct       time.Duration
}

// vsBaseline, vsTemporal and vsDirect are 0 when the floor was not run.
func (r ratio) vsBaseline() float64 { return divide(r.maestro, r.baseline) }
func (r ratio) vsTemporal() float64 { return divide(r.maestro, r.temporal) }
func (r ratio) vsDirect() float64   { return divide(r.maestro, r.direct) }

func divide(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func newReport(results []result, ledgerCounted bool, own map[string]ledgerPerCall) report {
	p50 := map[string]time.Duration{}
	key := func(path, op string, conc int) string { return fmt.Sprintf("%s|%s|%d", path, op, conc) }
	for _, r := range results {
		p50[key(r.path, r.op, r.concurrency)] = r.stats.p50
	}
	rep := report{results: results, goals: evaluateGoals(results, own), ledgerCounted: ledgerCounted, ownLedger: own}
	for _, r := range results {
		if r.path != pathMaestro {
			continue
		}
		base := matchedBaseline(r.op)
		rep.ratios = append(rep.ratios, ratio{
			op:           r.op,
			concurrency:  r.concurrency,
			maestro:      r.stats.p50,
			baseline:     p50[key(base, r.op, r.concurrency)],
			baselinePath: base,
			temporal:     p50[key(pathTemporal, r.op, r.concurrency)],
			direct:       p50[key(pathDirect, r.op, r.concurrency)],
		})
	}
	return rep
}

// ratioFor finds the comparison for a maestro result.
func (rep report) ratioFor(r result) (ratio, bool) {
	for _, q := range rep.ratios {
		if r.path == pathMaestro && q.op == r.op && q.concurrency == r.concurrency {
			return q, true
		}
	}
	return ratio{}, false
}

// output is one file a run writes.
type output struct {
	name  string
	write func(io.Writer) error
}

func (rep report) outputs() []output {
	return []output{
		{csvFile, rep.writeCSV},
		{chartFile, rep.writeChart},
		{historiesFile, rep.writeHistories},
		{goalsCSVFile, rep.writeGoalsCSV},
		{goalsMDFile, rep.writeGoalsMarkdown},
	}
}

// write prints the tables to out, the goal table last, and writes the
// files into dir.
func (rep report) write(out io.Writer, dir string) error {
	if err := rep.writeTables(out); err != nil {
		return fmt.Errorf("error printing results: %w", err)
	}
	if err := rep.writeLedgerTable(out); err != nil {
		return fmt.Errorf("error printing ledger round trips: %w", err)
	}
	if err := rep.writeGoalTable(out); err != nil {
		return fmt.Errorf("error printing goals: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("error creating %s: %w", dir, err)
	}
	for _, o := range rep.outputs() {
		if err := writeFile(filepath.Join(dir, o.name), o.write); err != nil {
			return err
		}
	}
	return nil
}

// files lists the paths write creates, for the progress log.
func (rep report) files(dir string) string {
	var paths []string
	for _, o := range rep.outputs() {
		paths = append(paths, filepath.Join(dir, o.name))
	}
	return strings.Join(paths, ", ")
}

func writeFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("error creating %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("error closing %s: %w", path, cerr)
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("error writing %s: %w", path, err)
	}
	return nil
}

// failures reports calls that failed, which make the run's numbers
// suspect even though they were written.
func (rep report) failures() error {
	failed := 0
	var first error
	for _, r := range rep.results {
		failed += r.failed
		if first == nil && r.err != nil {
			first = fmt.Errorf("%s at concurrency %d: %w", r.scenario, r.concurrency, r.err)
		}
	}
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("%d calls failed; the first: %w", failed, first)
}

// writeHistories records, per scenario, the event types of one call's
// workflow and of one session: what each path actually costs in history.
func (rep report) writeHistories(w io.Writer) error {
	var b strings.Builder
	seen := map[string]bool{}
	for _, r := range rep.results {
		if seen[r.scenario] || len(r.history) == 0 {
			continue
		}
		seen[r.scenario] = true
		fmt.Fprintf(&b, "%s (%s): %d events\n  %s\n", r.scenario, r.tool, len(r.history), strings.Join(r.history, "\n  "))
		if len(r.sessionHistory) > 0 {
			fmt.Fprintf(&b, "%s, one of its sessions at concurrency %d: %d events\n  %s\n",
				r.scenario, r.concurrency, len(r.sessionHistory), strings.Join(r.sessionHistory, "\n  "))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
