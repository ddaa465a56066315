package grader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/tools"
)

// Config configures a grading run.
type Config struct {
	// Store is a migrated ledger the runs record into; each run uses its
	// own session and operation key. Required.
	Store ledger.Store
	// Runs is how many times each path runs; all must pass. Optional:
	// default 3.
	Runs int
	// ProviderTimeout bounds each provider call, and so how long a timeout
	// path waits. Optional: default 300ms.
	ProviderTimeout time.Duration
	// Logger receives maestro's own logs. Optional: default discarded.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Runs == 0 {
		c.Runs = 3
	}
	if c.ProviderTimeout == 0 {
		c.ProviderTimeout = 300 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

type grader struct {
	cfg     Config
	catalog *tools.Catalog
}

// Run grades every path of every target against the demo catalog. An
// error means grading could not start; a path that failed is in the
// report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	if cfg.Store == nil {
		return nil, errors.New("grader: a store is required")
	}
	// The grader's error paths run behind the gate's rules, on session
	// facts nobody signs: its catalog lets them rest on the agent's word.
	doc, err := tools.TrustingDeclaredFacts(tools.DemoCatalogYAML)
	if err != nil {
		return nil, fmt.Errorf("error loading the demo catalog: %w", err)
	}
	// Each trial opens its own session and leaves it open: caps that keep
	// one agent from drowning the queue would stop a long run.
	if doc, err = tools.LiftingAgentCaps(doc); err != nil {
		return nil, fmt.Errorf("error loading the demo catalog: %w", err)
	}
	cat, err := tools.Load(doc)
	if err != nil {
		return nil, fmt.Errorf("error loading the demo catalog: %w", err)
	}
	if err := cfg.Store.ToolRegistrySync(ctx, server.RegistryRows(cat)); err != nil {
		return nil, fmt.Errorf("error mirroring the catalog into the ledger: %w", err)
	}
	for _, t := range Targets {
		if _, ok := cat.Tool(t.Tool); !ok {
			return nil, fmt.Errorf("grader: target tool %s is not in the demo catalog", t.Tool)
		}
	}
	g := &grader{cfg: cfg, catalog: cat}
	rep := &Report{Runs: cfg.Runs}
	for _, target := range Targets {
		for _, path := range Paths {
			rep.Paths = append(rep.Paths, g.path(ctx, target, path))
		}
	}
	rep.LatencyByPath = latencyByPath(rep.Paths)
	return rep, nil
}

// path runs one path cfg.Runs times, each on fresh stand-ins.
func (g *grader) path(ctx context.Context, target Target, path Path) PathResult {
	tool, _ := g.catalog.Tool(target.Tool) // checked by Run
	res := PathResult{Connector: target.Connector, Tool: target.Tool, Path: path, Expected: path.expectedFor(target, tool.Connector.PerformsEffect())}
	for n := 1; n <= g.cfg.Runs; n++ {
		graded, err := g.once(ctx, target, path, n, res.Expected)
		run := RunResult{Status: graded.Observation.Status, Code: graded.Observation.Code, LatencyMS: millis(graded.Latency)}
		if err != nil {
			// A run that produced no observation at all is the worst
			// failure: the agent would be told nothing.
			run.Violations = []Violation{{Rule: "observation", Detail: err.Error()}}
		} else {
			run.Violations = Grade(graded)
		}
		res.Results = append(res.Results, run)
	}
	res.Latency = latencyOf(res.Results)
	return res
}
