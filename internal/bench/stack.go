package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/pgwire"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/tools"
)

// stack is everything the scenarios share: one maestro in dev mode (its
// Temporal server, embedded or the bench's own on PostgreSQL, its ledger
// and provider stand-ins), a connector set pointed at the same stand-ins,
// and a worker for the bare workflows on the same Temporal server.
type stack struct {
	daemon   *server.Server
	catalog  *tools.Catalog
	conns    connectors.Set
	temporal client.Client
	worker   worker.Worker
	agent    *apiclient.Client
	ops      *apiclient.Client
	// removeDir is the temporary data directory to delete on stop.
	removeDir string
	// ledgerProxy counts the ledger's round trips; nil unless counted.
	ledgerProxy *pgwire.Proxy
	// uncounted reaches the counted ledger around the proxy, for the
	// bench's own reads; nil unless counted.
	uncounted ledger.Store
	// temporalPG is the Temporal server on PostgreSQL; nil when maestro
	// embeds its own on SQLite.
	temporalPG *temporalOnPostgres
	// ledgerSchema is the run's own schema on ledgerBase, dropped on stop;
	// empty when the ledger is SQLite.
	ledgerBase, ledgerSchema string
}

func startStack(ctx context.Context, cfg Config, runID string) (s *stack, err error) {
	// The deferred stop holds its own reference: an error return sets s
	// to nil before deferred calls run.
	started := &stack{}
	s = started
	defer func() {
		if err != nil {
			err = errors.Join(err, started.stop())
		}
	}()
	dataDir := cfg.DataDir
	if dataDir == "" {
		if dataDir, err = os.MkdirTemp("", "maestro-bench-"); err != nil {
			return nil, fmt.Errorf("error creating a data directory: %w", err)
		}
		s.removeDir = dataDir
	}
	port, err := devtemporal.FindFreePort()
	if err != nil {
		return nil, fmt.Errorf("error finding ports for Temporal: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(cfg.Progress, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The SMS under test is pre-approved by the catalog's rule on the
	// caller's number, which no stand-in signs: the bench's catalog lets
	// the rule rest on the number the session states.
	catalog := filepath.Join(dataDir, "catalog.yaml")
	doc, err := tools.TrustingDeclaredFacts(tools.DemoCatalogYAML)
	if err != nil {
		return nil, err
	}
	// The approval cell opens every request before it measures deciding
	// them, so a session holds several at once.
	if doc, err = tools.AllowingWritesWhileAwaiting(doc); err != nil {
		return nil, err
	}
	// It measures throughput, not the caps that keep one agent from
	// drowning the queue: it leaves many sessions open and requests waiting.
	if doc, err = tools.LiftingAgentCaps(doc); err != nil {
		return nil, err
	}
	if err := os.WriteFile(catalog, doc, 0o600); err != nil {
		return nil, fmt.Errorf("error writing the catalog: %w", err)
	}
	databaseURL := cfg.DatabaseURL
	if databaseURL != "" {
		// The run's ledger gets a schema of its own: the sessions it leaves
		// open would otherwise count against the agent's caps for whatever
		// else uses that database.
		s.ledgerBase, s.ledgerSchema = cfg.DatabaseURL, "maestro_bench_"+runID
		if databaseURL, err = ledger.SchemaCreate(ctx, s.ledgerBase, s.ledgerSchema); err != nil {
			s.ledgerSchema = ""
			return nil, err
		}
	}
	if databaseURL != "" && !cfg.SkipLedgerCount {
		scoped := databaseURL
		if s.ledgerProxy, databaseURL, err = pgwire.Start(scoped); err != nil {
			if errors.Is(err, pgwire.ErrTLSRequired) {
				err = fmt.Errorf("%w: pass -count-ledger=false", err)
			}
			return nil, err
		}
		if s.uncounted, err = ledger.OpenPostgres(ctx, scoped); err != nil {
			return nil, err
		}
	}
	var temporalAddr string
	if cfg.TemporalDatabaseURL != "" {
		if s.temporalPG, err = startTemporalOnPostgres(ctx, cfg.TemporalDatabaseURL, cfg.TemporalShards, runID); err != nil {
			return nil, err
		}
		temporalAddr = s.temporalPG.server.HostPort()
	}
	s.daemon, err = server.Start(ctx, server.Config{
		Dev:             true,
		CatalogPath:     catalog,
		HTTPAddr:        "127.0.0.1:0",
		DataDir:         filepath.Join(dataDir, "data"),
		DatabaseURL:     databaseURL,
		TemporalAddress: temporalAddr,
		TemporalPort:    port,
		Logger:          logger,
	})
	if err != nil {
		return nil, fmt.Errorf("error starting maestro: %w", err)
	}
	s.catalog = s.daemon.Catalog
	sins := s.daemon.Standins()
	if s.conns, err = connectors.NewSet(sins.TwilioConfig(), sins.SESConfig(), connectors.HTTPConfig{Services: sins.HTTPServices()}); err != nil {
		return nil, fmt.Errorf("error building connectors: %w", err)
	}
	// The bare workflows' starter and worker share one client, as maestro's
	// do: eager start hands the first task only to a worker of the client
	// that started the workflow.
	// With maestro's codec too, so the bare workflows pay for encryption
	// as maestro's do.
	s.temporal, err = client.DialContext(ctx, s.daemon.Codec().Apply(client.Options{
		HostPort:          s.daemon.TemporalAddress(),
		Namespace:         s.daemon.Namespace(),
		Logger:            sdklog.NewStructuredLogger(logger),
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: server.TemporalCompression(s.daemon.TemporalAddress())},
	}))
	if err != nil {
		return nil, fmt.Errorf("error connecting to Temporal: %w", err)
	}
	s.worker = worker.New(s.temporal, bareTaskQueue, worker.Options{})
	registerBare(s.worker, s.conns)
	if err := s.worker.Start(); err != nil {
		return nil, fmt.Errorf("error starting the bare worker: %w", err)
	}
	// A caller at 64-way concurrency keeps that many connections open;
	// the default transport keeps two per host and would measure
	// connection churn instead of maestro.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	httpClient := &http.Client{Transport: tr, Timeout: time.Minute}
	s.agent = apiclient.New(s.daemon.URL(), tools.DemoAgentKey, apiclient.Options{HTTPClient: httpClient})
	s.ops = apiclient.New(s.daemon.URL(), tools.DemoOpsKey, apiclient.Options{HTTPClient: httpClient})
	return s, nil
}

// stop stops whatever was started, in reverse order.
func (s *stack) stop() error {
	var errs []error
	if s.worker != nil {
		s.worker.Stop()
	}
	if s.temporal != nil {
		s.temporal.Close()
	}
	if s.daemon != nil {
		errs = append(errs, s.daemon.Stop(context.Background()))
	}
	if s.uncounted != nil {
		errs = append(errs, s.uncounted.Close())
	}
	if s.ledgerProxy != nil {
		errs = append(errs, s.ledgerProxy.Stop())
	}
	if s.temporalPG != nil {
		errs = append(errs, s.temporalPG.stop())
	}
	if s.ledgerSchema != "" {
		// The run's context may be cancelled by now; the schema must go.
		errs = append(errs, ledger.SchemaDrop(context.Background(), s.ledgerBase, s.ledgerSchema))
	}
	if s.removeDir != "" {
		errs = append(errs, os.RemoveAll(s.removeDir))
	}
	return errors.Join(errs...)
}
