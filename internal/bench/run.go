package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Run starts one maestro in dev mode, runs every selected scenario at
// every concurrency on it, prints the tables and writes the CSV file, the
// chart and the recorded histories. Calls that fail are counted in the
// table and make Run return an error once the results are written.
func Run(ctx context.Context, cfg Config) (err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	ledger := "SQLite"
	if cfg.DatabaseURL != "" {
		ledger = "PostgreSQL"
	}
	fmt.Fprintf(cfg.Progress, "Starting maestro in dev mode (embedded Temporal, %s ledger, provider stand-ins)…\n", ledger)
	s, err := startStack(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.stop()) }()
	scenarios := selected(s.scenarios(), cfg.Only)
	if len(scenarios) == 0 {
		return fmt.Errorf("no scenario matches %q", cfg.Only)
	}

	results, err := runCells(ctx, cfg, s, scenarios)
	if err != nil {
		return err
	}
	rep := newReport(results)
	if err := rep.write(cfg.Out, cfg.OutDir); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Progress, "Wrote %s.\n", rep.files(cfg.OutDir))
	return rep.failures()
}

// runCells runs concurrency by concurrency, every scenario at each, so the
// paths compared at one concurrency run next to each other on a server in
// the same state; the results come back in scenario order.
func runCells(ctx context.Context, cfg Config, s *stack, scenarios []scenario) ([]result, error) {
	runID := newRunID()
	h := historyReader{temporal: s.temporal}
	byScenario := make([][]result, len(scenarios))
	for i, conc := range cfg.Concurrency {
		for j, sc := range scenarios {
			c := cell{
				scenario:    sc,
				concurrency: conc,
				calls:       cfg.Calls[i],
				perSession:  cfg.CallsPerSession,
				prefix:      fmt.Sprintf("bench-%s/%s/c%d", runID, sc.slug(), conc),
			}
			fmt.Fprintf(cfg.Progress, "%-22s c=%-3d %4d calls ", sc.name(), conc, c.calls)
			start := time.Now()
			r, err := c.run(ctx, h)
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

// newRunID keeps operation keys unique across runs that share a ledger.
func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}
