package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/maestro-run/maestro/internal/pgwire"
)

// Run starts one maestro in dev mode, runs every selected scenario at
// every concurrency on it, prints the tables and the goal table and writes
// the CSV files, the chart, the goal table and the recorded histories.
// Calls that fail are counted in the table and make Run return an error
// once the results are written; a missed goal is only reported.
func Run(ctx context.Context, cfg Config) (err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	runID := newRunID()
	fmt.Fprintf(cfg.Progress, "Starting maestro in dev mode (%s, %s ledger, provider stand-ins)…\n", temporalName(cfg), ledgerName(cfg))
	s, err := startStack(ctx, cfg, runID)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.stop()) }()
	scenarios := selected(s.scenarios(), cfg.Only)
	if len(scenarios) == 0 {
		return fmt.Errorf("no scenario matches %q", cfg.Only)
	}

	prof, err := startProfiles(cfg)
	if err != nil {
		return err
	}
	results, err := runCells(ctx, cfg, s, scenarios, runID)
	if perr := prof.stop(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	var own map[string]ledgerPerCall
	if s.ledgerProxy != nil {
		fmt.Fprintln(cfg.Progress, "Counting each route's own ledger work, one call at a time…")
		if own, err = s.ledgerPass(ctx, scenarios, s.ledgerProxy.Counts, runID); err != nil {
			return err
		}
	}
	rep := newReport(results, s.ledgerProxy != nil, own)
	if err := rep.write(cfg.Out, cfg.OutDir); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Progress, "Wrote %s%s.\n", rep.files(cfg.OutDir), prof.files())
	return rep.failures()
}

func temporalName(cfg Config) string {
	if cfg.TemporalDatabaseURL != "" {
		return fmt.Sprintf("Temporal on PostgreSQL with %d history shards", cfg.TemporalShards)
	}
	return "embedded Temporal on SQLite"
}

func ledgerName(cfg Config) string {
	switch {
	case cfg.DatabaseURL == "":
		return "SQLite"
	case cfg.SkipLedgerCount:
		return "PostgreSQL"
	}
	return "counted PostgreSQL"
}

// runCells runs concurrency by concurrency, every scenario at each, so the
// paths compared at one concurrency run next to each other on a server in
// the same state; the results come back in scenario order.
func runCells(ctx context.Context, cfg Config, s *stack, scenarios []scenario, runID string) ([]result, error) {
	h := historyReader{temporal: s.temporal}
	var meter func() pgwire.Counts
	if s.ledgerProxy != nil {
		meter = s.ledgerProxy.Counts
	}
	byScenario := make([][]result, len(scenarios))
	for i, conc := range cfg.Concurrency {
		for j, sc := range scenarios {
			c := cell{
				scenario:    sc,
				concurrency: conc,
				calls:       cfg.Calls[i],
				perSession:  cfg.CallsPerSession,
				prefix:      fmt.Sprintf("bench-%s.%s.c%d", runID, sc.slug(), conc),
			}
			fmt.Fprintf(cfg.Progress, "%-27s c=%-3d %4d calls ", sc.name(), conc, c.calls)
			start := time.Now()
			r, err := c.run(ctx, h, meter)
			if err != nil {
				fmt.Fprintln(cfg.Progress)
				return nil, err
			}
			fmt.Fprintf(cfg.Progress, "p50 %8.2f ms %8.1f calls/s  (%.1fs)\n", ms(r.stats.p50), r.stats.throughput, time.Since(start).Seconds())
			byScenario[j] = append(byScenario[j], r)
		}
	}
	return slices.Concat(byScenario...), nil
}

// newRunID keeps operation keys unique across runs that share a ledger,
// and names the run's Temporal databases on PostgreSQL.
func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}
