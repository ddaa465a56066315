package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Config configures a run.
type Config struct {
	// Concurrency lists the caller counts to run every scenario at.
	// Optional: default 1, 16 and 64.
	Concurrency []int
	// Calls lists the measured calls per cell, one per concurrency.
	// Optional: default 30, 96 and 192.
	Calls []int
	// CallsPerSession is how many calls each caller makes in one maestro
	// session before starting the next, as an agent makes a handful over
	// one phone call. Optional: default 5.
	CallsPerSession int
	// Only keeps the scenarios whose name contains one of these strings
	// ("maestro", "temporal/read"…). Optional: default every scenario.
	Only []string
	// OutDir receives bench.csv, latency.svg, histories.txt, goals.csv,
	// goals.md and the profiles asked for. Optional: default
	// "results/bench".
	OutDir string
	// DataDir holds the embedded stack's files. Optional: default a fresh
	// temporary directory, removed afterwards.
	DataDir string
	// DatabaseURL puts maestro's ledger on PostgreSQL instead of SQLite.
	// Optional: default SQLite in DataDir.
	DatabaseURL string
	// SkipLedgerCount connects maestro to DatabaseURL directly instead of
	// through the relay that counts its round trips, which costs a
	// loopback hop per round trip. Optional: default false, counting on
	// whenever DatabaseURL is set.
	SkipLedgerCount bool
	// TemporalDatabaseURL runs the embedded Temporal server on PostgreSQL
	// with TemporalShards history shards instead of SQLite with one, in
	// two fresh databases on that server dropped after the run. Optional:
	// default SQLite.
	TemporalDatabaseURL string
	// TemporalShards is the history shard count on PostgreSQL. Optional:
	// default 4.
	TemporalShards int
	// CPUProfile writes a CPU profile of the measured cells to
	// OutDir/cpu.pprof. Optional: default off.
	CPUProfile bool
	// MemProfile writes a heap profile taken after the measured cells to
	// OutDir/heap.pprof. Optional: default off.
	MemProfile bool
	// Out receives the results table. Optional: default os.Stdout.
	Out io.Writer
	// Progress receives progress lines and maestro's warnings. Optional:
	// default os.Stderr.
	Progress io.Writer
}

// WithDefaults returns c with optional fields filled in.
func (c Config) WithDefaults() Config {
	if len(c.Concurrency) == 0 {
		c.Concurrency = []int{1, 16, 64}
	}
	if len(c.Calls) == 0 {
		c.Calls = []int{30, 96, 192}
	}
	if c.CallsPerSession == 0 {
		c.CallsPerSession = 5
	}
	if c.TemporalShards == 0 {
		c.TemporalShards = 4
	}
	if c.OutDir == "" {
		c.OutDir = "results/bench"
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Progress == nil {
		c.Progress = os.Stderr
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if len(c.Calls) != len(c.Concurrency) {
		errs = append(errs, fmt.Errorf("give one call count per concurrency: %d counts for %d concurrencies", len(c.Calls), len(c.Concurrency)))
	}
	for _, n := range c.Concurrency {
		if n < 1 {
			errs = append(errs, fmt.Errorf("concurrency %d: it must be at least 1", n))
		}
	}
	for _, n := range c.Calls {
		if n < 1 {
			errs = append(errs, fmt.Errorf("call count %d: it must be at least 1", n))
		}
	}
	if c.TemporalShards < 1 {
		errs = append(errs, fmt.Errorf("temporal shards %d: it must be at least 1", c.TemporalShards))
	}
	if c.CallsPerSession < 1 {
		errs = append(errs, errors.New("calls per session must be at least 1"))
	}
	return errors.Join(errs...)
}

// ParseFlags reads a Config from command-line arguments.
func ParseFlags(name string, args []string) (Config, error) {
	var c Config
	var conc, calls, only string
	countLedger := true
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	fs.StringVar(&conc, "concurrency", "1,16,64",
		"comma-separated caller counts to run every scenario at; the goals name 1, 16 and 64, and a goal at a count not run is reported as not measured")
	fs.StringVar(&calls, "calls", "30,96,192", "comma-separated measured calls per cell, one per concurrency")
	fs.IntVar(&c.CallsPerSession, "calls-per-session", 5, "calls each caller makes in one maestro session before starting the next")
	fs.StringVar(&only, "only", "",
		"comma-separated substrings: run only the scenarios whose name contains one (e.g. maestro,temporal+eager); goals missing a side are reported as not measured")
	fs.StringVar(&c.OutDir, "out", "results/bench",
		"directory for bench.csv, latency.svg, histories.txt, goals.csv, goals.md and the profiles asked for")
	fs.StringVar(&c.DatabaseURL, "database-url", "",
		"PostgreSQL URL for maestro's ledger, in a fresh schema dropped afterwards (default: SQLite in the data directory); with it the ledger's round trips per call are counted unless -count-ledger=false")
	fs.BoolVar(&countLedger, "count-ledger", true,
		"with -database-url, relay the ledger's connections through a counter of round trips, statements and transactions (one loopback hop per round trip); false connects directly")
	fs.StringVar(&c.TemporalDatabaseURL, "temporal-database-url", "",
		"PostgreSQL URL: run the in-process Temporal server on PostgreSQL with -temporal-shards history shards, in two fresh databases dropped afterwards (default: SQLite, one history shard)")
	fs.IntVar(&c.TemporalShards, "temporal-shards", 4, "history shards of the Temporal server on PostgreSQL (with -temporal-database-url)")
	fs.BoolVar(&c.CPUProfile, "cpuprofile", false, "write a CPU profile of the measured cells to cpu.pprof in the -out directory")
	fs.BoolVar(&c.MemProfile, "memprofile", false, "write a heap profile taken after the measured cells to heap.pprof in the -out directory")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	var err error
	if c.Concurrency, err = parseInts(conc); err != nil {
		return Config{}, fmt.Errorf("error parsing -concurrency: %w", err)
	}
	if c.Calls, err = parseInts(calls); err != nil {
		return Config{}, fmt.Errorf("error parsing -calls: %w", err)
	}
	if only != "" {
		c.Only = strings.Split(only, ",")
	}
	c.SkipLedgerCount = !countLedger
	return c, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
