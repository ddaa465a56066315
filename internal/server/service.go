package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/maestro-run/maestro/activities"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/answer"
	"github.com/maestro-run/maestro/internal/api"
	"github.com/maestro-run/maestro/internal/callback"
	"github.com/maestro-run/maestro/internal/canary"
	"github.com/maestro-run/maestro/internal/codec"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/console"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/mcp"
	"github.com/maestro-run/maestro/internal/outbox"
	"github.com/maestro-run/maestro/internal/telemetry"
	"github.com/maestro-run/maestro/internal/throttle"
	"github.com/maestro-run/maestro/internal/transcriptref"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// CoreConfig holds what a maestro process needs.
type CoreConfig struct {
	// Role is which parts this process runs: see Role. Optional: default
	// RoleAll.
	Role       Role
	Store      ledger.Store
	Catalog    *tools.Catalog
	Temporal   client.Client
	Connectors connectors.Set
	// HTTPAddr is where the API listens. Optional: default "127.0.0.1:8080";
	// use "127.0.0.1:0" for an ephemeral port. Ignored when Listener is set.
	HTTPAddr string
	// Listener is where the API serves, for a caller that must know the
	// address before the service starts (to give it to providers as a
	// callback URL, say). Optional: default a listener on HTTPAddr.
	Listener net.Listener
	// PublicURL is the base URL providers reach the API at: see
	// api.Config. Optional.
	PublicURL string
	// TaskQueue. Optional: default workflows.TaskQueue.
	TaskQueue string
	// WaitTimeout: see api.Config. Optional.
	WaitTimeout time.Duration
	// LeaseTTL: see activities.Config. Optional.
	LeaseTTL time.Duration
	// ListingLag: see activities.Config. Optional.
	ListingLag time.Duration
	// PostCallBackoff: see activities.Config. Optional.
	PostCallBackoff mt.Backoff
	// TokenTTL is the lifetime of an approval's single-use token.
	// Optional: default 300s.
	TokenTTL time.Duration
	// RollbackWait: see admission.Config. Optional.
	RollbackWait time.Duration
	// SweepEvery is how often the sweep finishes invocations whose
	// workflow ended without finishing them. Optional: default 1m.
	SweepEvery time.Duration
	// SweepIdle: see activities.Config. Optional.
	SweepIdle time.Duration
	// DrainTimeout bounds how long Stop lets requests and activities in
	// flight finish: the worker's WorkerStopTimeout, and the API's
	// shutdown. Optional: default 30s.
	DrainTimeout time.Duration
	// Logger. Optional: default slog.Default().
	Logger *slog.Logger
	// TwilioAuthToken verifies Twilio's status callbacks: see api.Config.
	// Optional.
	TwilioAuthToken string
	// Transcripts says which transcript_ref URLs are fetched: checked by
	// the API and again by the worker. Optional: the zero policy refuses
	// every transcript_ref.
	Transcripts transcriptref.Policy
	// Timeouts bound how long the API server waits on a client.
	// Optional: see HTTPTimeouts.
	Timeouts HTTPTimeouts
	// Signaller delivers the signals queued in the ledger's outbox.
	// Optional: default the Temporal client.
	Signaller outbox.Signaller
	// OutboxInterval is how often the outbox relay looks for due signals
	// beyond the nudges a queued signal gives it. Optional: see
	// outbox.Config.
	OutboxInterval time.Duration
	// Getenv reads the agents' callback and platform secrets, named in
	// the catalog. Optional: default os.Getenv.
	Getenv func(string) string
	// LoopbackCallbacks lets an agent's callback URL be plain http to a
	// loopback host, as dev mode's agents on this machine need. Optional:
	// default false, so every callback goes over https.
	LoopbackCallbacks bool
	// InsecureCookies lets the ops console's cookies travel over plain
	// http, as dev mode on loopback needs. Optional: default false, so
	// they are Secure.
	InsecureCookies bool
	// Callbacks tunes the callback relay; its Store and Secrets are set
	// here. Optional: see callback.Config.
	Callbacks callback.Config
	// Codec serves the codec endpoint, decoding the Temporal payloads it
	// encrypts; the Temporal client must have been made with it (see
	// codec.Codec.Apply). Optional: without it the endpoint answers 404.
	Codec *codec.Codec
	// CodecOrigin: see api.Config. Optional.
	CodecOrigin string
	// CatalogFile re-reads this process's catalog file, for a reload (the
	// API's, SIGHUP's, or following another process's). Optional: without
	// it the catalog given at start is kept and a reload is refused.
	CatalogFile func() ([]byte, error)
	// CheckCatalog runs the checks a start runs on a catalog beyond the
	// loader's own, so a reload refuses what a start would. Optional.
	CheckCatalog func(*tools.Catalog) error
	// CatalogPoll is how often the process asks the ledger which catalog
	// version is current, to follow another process's reload. Optional:
	// default 5s.
	CatalogPoll time.Duration
	// Canary configures the reality canary: see canary.go. Optional.
	Canary CanaryConfig
	// Throttle limits failed key checks per client address, shared by
	// the API, the MCP endpoint and the console's sign-in. Optional: see
	// throttle.Config for the defaults; Logger defaults to this Logger.
	Throttle throttle.Config
	// Telemetry serves /metrics, times provider calls and, when it
	// traces, makes a span of each request; the Temporal client should
	// have been made with its ClientOptions. Optional: default metrics
	// only, without Temporal's.
	Telemetry *telemetry.Telemetry
}

// HTTPTimeouts are the API server's connection timeouts. Without them one
// slow or silent client holds a connection, and its goroutine, forever.
type HTTPTimeouts struct {
	// ReadHeader bounds reading a request's headers. Optional: default 10s.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included. Optional:
	// default 30s.
	Read time.Duration
	// Write bounds a request from the end of its headers to the end of the
	// answer, so it must outlast the longest handler that waits on no
	// budget of its own, such as a rollback's compensations. A route that
	// waits on one sets its own deadline, later or earlier: a platform tool
	// call its agent's budget plus tools.TimeoutMargin, POST
	// /v1/invocations and an MCP tool call the wait timeout plus a margin
	// (api.Server.AnswerTimeout). Optional: default the wait timeout plus
	// 90s.
	Write time.Duration
	// Idle bounds a kept-alive connection between requests. Optional:
	// default 120s.
	Idle time.Duration
}

func (t HTTPTimeouts) withDefaults(wait time.Duration) HTTPTimeouts {
	if t.ReadHeader == 0 {
		t.ReadHeader = 10 * time.Second
	}
	if t.Read == 0 {
		t.Read = 30 * time.Second
	}
	if t.Write == 0 {
		if wait == 0 {
			wait = api.DefaultWaitTimeout
		}
		t.Write = wait + 90*time.Second
	}
	if t.Idle == 0 {
		t.Idle = 120 * time.Second
	}
	return t
}

// WithDefaults returns c with optional fields filled in.
func (c CoreConfig) WithDefaults() CoreConfig {
	if c.Role == "" {
		c.Role = RoleAll
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 30 * time.Second
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = "127.0.0.1:8080"
	}
	if c.TaskQueue == "" {
		c.TaskQueue = workflows.TaskQueue
	}
	if c.SweepEvery == 0 {
		c.SweepEvery = time.Minute
	}
	if c.CatalogPoll == 0 {
		c.CatalogPoll = 5 * time.Second
	}
	if c.Canary.Every == 0 {
		c.Canary.Every = DefaultCanaryEvery
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Timeouts = c.Timeouts.withDefaults(c.WaitTimeout)
	if c.Signaller == nil {
		c.Signaller = c.Temporal
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	return c
}

// Core is a running maestro.
type Core struct {
	worker   worker.Worker // nil in role api
	http     *http.Server
	listener net.Listener
	done     chan error
	drain    time.Duration
	logger   *slog.Logger
	// ready answers /readyz; Stop marks it draining first.
	ready *readyCheck
	// stopRelay ends the outbox and callback relays; relaysDone closes
	// when they have.
	stopRelay  context.CancelFunc
	relaysDone chan struct{}

	// live is the catalog served now; a reload swaps it under reloadMu.
	live        *tools.Live
	store       ledger.Store
	catalogFile func() ([]byte, error)
	checkStart  func(*tools.Catalog) error
	catalogPoll time.Duration
	reloadMu    sync.Mutex
	// drift says why this process does not serve the ledger's current
	// catalog version; nil when it does.
	drift atomic.Pointer[string]
	// canary says which tools a red canary withholds from agents.
	canary *canary.State
	// closeStreams ends the streams MCP clients hold open, which would
	// otherwise hold the drain until its deadline; nil without the API.
	closeStreams func()
}

// StartCore mirrors the catalog into the registry, starts the parts its
// role runs (the worker, the API) and serves HTTP. It returns once the
// API is listening.
func StartCore(ctx context.Context, cfg CoreConfig) (*Core, error) {
	cfg = cfg.WithDefaults()
	if cfg.Store == nil || cfg.Catalog == nil || cfg.Temporal == nil || cfg.Connectors == nil {
		return nil, errors.New("service: store, catalog, Temporal client and connectors are required")
	}
	if err := cfg.Role.validate(); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	if err := cfg.Transcripts.Validate(); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	if cfg.Telemetry == nil {
		var err error
		if cfg.Telemetry, err = telemetry.New(ctx, telemetry.Config{Logger: cfg.Logger}); err != nil {
			return nil, err
		}
	}
	if err := cfg.Telemetry.CollectLedger(cfg.Store); err != nil {
		return nil, err
	}
	var callbacks *callback.Relay
	if cfg.Role.ServesAPI() {
		var err error
		if callbacks, err = newCallbackRelay(cfg); err != nil {
			return nil, err
		}
	}
	if err := checkNotifyWebhooks(cfg); err != nil {
		return nil, err
	}
	// Starting makes this process's catalog the current version: the last
	// process to start or reload names it, and the others follow.
	version := ledger.CatalogVersion{Version: cfg.Catalog.Hash(), Source: cfg.Catalog.Source()}
	if err := cfg.Store.CatalogActivate(ctx, version, RegistryRows(cfg.Catalog)); err != nil {
		return nil, fmt.Errorf("error mirroring catalog to tool_registry: %w", err)
	}
	s := &Core{done: make(chan error, 1), drain: cfg.DrainTimeout, logger: cfg.Logger,
		store: cfg.Store, catalogFile: cfg.CatalogFile, checkStart: cfg.CheckCatalog, catalogPoll: cfg.CatalogPoll}
	s.live = tools.NewLive(cfg.Catalog, catalogVersionSource(cfg.Store))
	s.ready = &readyCheck{store: cfg.Store, temporal: cfg.Temporal, catalog: s.catalogState}
	// The API needs the activities too: it settles reconciliations and
	// finishes stranded invocations itself.
	runner, err := newCanary(cfg, s)
	if err != nil {
		return nil, err
	}
	gate, acts, err := newGateAndActivities(cfg, s.live, s.canary.Withheld)
	if err != nil {
		return nil, err
	}
	if cfg.Role.RunsWorker() {
		if s.worker, err = startWorker(ctx, cfg, acts, runner); err != nil {
			return nil, err
		}
	}
	var relay *outbox.Relay
	handler := api.ProbeHandler(s.ready.check)
	if cfg.Role.ServesAPI() {
		if relay, handler, err = newAPI(cfg, s, gate, acts); err != nil {
			s.stopWorker()
			return nil, err
		}
	}
	if s.listener = cfg.Listener; s.listener == nil {
		if s.listener, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			s.stopWorker()
			return nil, fmt.Errorf("error listening on %s: %w", cfg.HTTPAddr, err)
		}
	}
	s.http = &http.Server{
		Handler:           cfg.Telemetry.Handler(handler),
		ReadHeaderTimeout: cfg.Timeouts.ReadHeader,
		ReadTimeout:       cfg.Timeouts.Read,
		WriteTimeout:      cfg.Timeouts.Write,
		IdleTimeout:       cfg.Timeouts.Idle,
	}
	if s.closeStreams != nil {
		s.http.RegisterOnShutdown(s.closeStreams)
	}
	s.run(ctx, relay, callbacks)
	return s, nil
}

// newGateAndActivities builds the admission gate and the activities that
// share it.
func newGateAndActivities(cfg CoreConfig, live tools.Source, withheld func(*tools.Tool) bool) (*admission.Gate, *activities.Activities, error) {
	// In a process that runs the API and the worker, the activities tell
	// the API's waiting requests of each outcome they commit.
	var answers *answer.Board
	if cfg.Role.ServesAPI() && cfg.Role.RunsWorker() {
		answers = answer.New()
	}
	gate, err := admission.New(admission.Config{
		Store: cfg.Store, Catalog: live, Temporal: cfg.Temporal, Withheld: withheld,
		TaskQueue: cfg.TaskQueue, Logger: cfg.Logger, RollbackWait: cfg.RollbackWait,
	})
	if err != nil {
		return nil, nil, err
	}
	acts, err := activities.New(activities.Config{
		Store: cfg.Store, Catalog: live, Connectors: cfg.Connectors, Gate: gate, Temporal: cfg.Temporal,
		LeaseTTL: cfg.LeaseTTL, TokenTTL: cfg.TokenTTL, SweepIdle: cfg.SweepIdle, ListingLag: cfg.ListingLag, Logger: cfg.Logger,
		TaskQueue: cfg.TaskQueue, PostCallBackoff: cfg.PostCallBackoff, Transcripts: cfg.Transcripts,
		PublicURL: cfg.PublicURL, Getenv: cfg.Getenv,
		Providers: cfg.Telemetry, Answers: answers,
	})
	if err != nil {
		return nil, nil, err
	}
	return gate, acts, nil
}

// startWorker starts the worker on the task queue and schedules the audit
// and the sweep; on error nothing is left running.
func startWorker(ctx context.Context, cfg CoreConfig, acts *activities.Activities, runner *canary.Runner) (worker.Worker, error) {
	// On Stop the worker polls no more and gives the activities it runs
	// the drain window to finish and report: cancelled mid-call, a
	// provider call's outcome would be unknown and go to reconciliation.
	w := worker.New(cfg.Temporal, cfg.TaskQueue, worker.Options{WorkerStopTimeout: cfg.DrainTimeout})
	Register(w, acts)
	if runner != nil {
		runner.Register(w)
	}
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("error starting worker: %w", err)
	}
	if err := scheduleAudit(ctx, cfg.Temporal, cfg.TaskQueue); err != nil {
		w.Stop()
		return nil, err
	}
	if err := scheduleSweep(ctx, cfg.Temporal, cfg.TaskQueue, cfg.SweepEvery); err != nil {
		w.Stop()
		return nil, err
	}
	if runner != nil {
		if err := scheduleCanary(ctx, cfg.Temporal, cfg.TaskQueue, cfg.Canary.Every); err != nil {
			w.Stop()
			return nil, err
		}
	}
	return w, nil
}

// newAPI builds the outbox relay and the API handler.
func newAPI(cfg CoreConfig, s *Core, gate *admission.Gate, acts *activities.Activities) (*outbox.Relay, http.Handler, error) {
	platforms, err := platformSecrets(cfg)
	if err != nil {
		return nil, nil, err
	}
	relay, err := outbox.New(outbox.Config{Store: cfg.Store, Signaller: cfg.Signaller, TokenTTL: cfg.TokenTTL, Interval: cfg.OutboxInterval, Logger: cfg.Logger})
	if err != nil {
		return nil, nil, err
	}
	limits := cfg.Throttle
	if limits.Logger == nil {
		limits.Logger = cfg.Logger
	}
	guesses := throttle.New(limits)
	srv, err := api.New(api.Config{
		Store: cfg.Store, Catalog: s.live, Gate: gate, Temporal: cfg.Temporal, Reconciler: acts, Finalizer: acts,
		WaitTimeout: cfg.WaitTimeout, TokenTTL: cfg.TokenTTL, Logger: cfg.Logger, Answers: acts.Answers(),
		TwilioAuthToken: cfg.TwilioAuthToken, PublicURL: cfg.PublicURL, Transcripts: cfg.Transcripts, Outbox: relay,
		PlatformSecrets: platforms, LoopbackCallbacks: cfg.LoopbackCallbacks, Ready: s.ready.check,
		Codec: payloadCodec(cfg.Codec), CodecOrigin: cfg.CodecOrigin,
		ReloadCatalog: s.reloadHandler(),
		Canary:        s.canary, RunCanary: s.runCanary(cfg.Temporal, cfg.TaskQueue),
		Throttle: guesses,
	})
	if err != nil {
		return nil, nil, err
	}
	mcpHandler, err := mcp.New(mcp.Config{Catalog: s.live, API: srv, PublicURL: cfg.PublicURL, Logger: cfg.Logger, Withheld: s.canary.Withheld, Throttle: guesses,
		AnswerTimeout: srv.AnswerTimeout()})
	if err != nil {
		return nil, nil, err
	}
	s.closeStreams = mcpHandler.CloseStreams
	ops, err := console.New(console.Config{API: srv, Catalog: s.live, Store: cfg.Store, InsecureCookies: cfg.InsecureCookies, Logger: cfg.Logger, Throttle: guesses})
	if err != nil {
		return nil, nil, err
	}
	return relay, console.Route(mcp.Route(srv, mcpHandler), ops), nil
}

// payloadCodec keeps a nil codec a nil interface, so the API sees none.
func payloadCodec(c *codec.Codec) converter.PayloadCodec {
	if c == nil {
		return nil
	}
	return c
}

// run serves HTTP and starts the outbox and callback relays, if this
// role runs them; they outlive ctx until Stop.
func (s *Core) run(ctx context.Context, relay *outbox.Relay, callbacks *callback.Relay) {
	go func() { s.done <- s.http.Serve(s.listener) }()
	// The relay's first sweep delivers what a previous process left owed.
	relayCtx, stopRelay := context.WithCancel(context.WithoutCancel(ctx))
	s.stopRelay, s.relaysDone = stopRelay, make(chan struct{})
	var wg sync.WaitGroup
	if relay != nil {
		wg.Go(func() { relay.Run(relayCtx) })
	}
	if callbacks != nil {
		wg.Go(func() { callbacks.Run(relayCtx) })
	}
	wg.Go(func() { s.followCatalog(relayCtx, s.catalogPoll) })
	go func() {
		wg.Wait()
		close(s.relaysDone)
	}()
}

// Register registers maestro's workflows and activities on a worker.
func Register(w worker.Registry, acts *activities.Activities) {
	workflows.Register(w)
	acts.Register(w)
}

// Catalog is the catalog this process serves now.
func (s *Core) Catalog() *tools.Catalog { return s.live.Load() }

// reloadHandler is the API's reload, nil for a process without a catalog
// file to re-read, so the route answers 404.
func (s *Core) reloadHandler() func(context.Context) (apitype.CatalogReload, error) {
	if s.catalogFile == nil {
		return nil
	}
	return s.ReloadCatalog
}

// catalogState is the catalog part of /readyz.
func (s *Core) catalogState() (version, drift string) {
	if d := s.drift.Load(); d != nil {
		drift = *d
	}
	return s.live.Load().Hash(), drift
}

// URL is the API's base URL.
func (s *Core) URL() string {
	return "http://" + s.listener.Addr().String()
}

// Stop drains the process: /readyz answers "draining" at once, the API
// takes no new requests and lets those in flight finish, and the worker
// polls no more and lets its running activities finish and record their
// results, each within the drain window; then the relays stop. ctx may
// shorten the API's part of the window.
func (s *Core) Stop(ctx context.Context) error {
	s.ready.drain()
	ctx, cancel := context.WithTimeout(ctx, s.drain)
	defer cancel()
	// The worker drains while the API does: an API request waiting on an
	// activity ends when the activity does.
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		s.stopWorker()
	}()
	err := s.http.Shutdown(ctx)
	<-workerDone
	s.stopRelay()
	<-s.relaysDone
	if serveErr := <-s.done; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	if err != nil {
		return fmt.Errorf("error draining the API: %w", err)
	}
	return nil
}

func (s *Core) stopWorker() {
	if s.worker != nil {
		s.logger.Info("stopping the worker: activities in flight may finish", "drain_timeout", s.drain)
		s.worker.Stop()
	}
}

// RegistryRows is the catalog as mirrored into the ledger's tool_registry,
// which the audit reads next to the approval records.
func RegistryRows(c *tools.Catalog) []ledger.ToolRegistryRow {
	rows := c.RegistryRows()
	out := make([]ledger.ToolRegistryRow, len(rows))
	for i, r := range rows {
		out[i] = ledger.ToolRegistryRow{
			Name:             r.Name,
			Effect:           r.Effect,
			Delivery:         r.Delivery,
			Reversibility:    r.Reversibility,
			CompensationTool: r.CompensationTool,
			ApproverRole:     r.ApproverRole,
			ConnectorKind:    string(r.ConnectorKind),
			Owner:            r.Owner,
			CatalogHash:      r.CatalogHash,
		}
	}
	return out
}

// catalogVersionSource reads a catalog version's file from the ledger,
// saying ErrVersionUnknown where the ledger keeps none, so a caller tells
// a version that will never load from a ledger that did not answer.
func catalogVersionSource(st ledger.Store) func(context.Context, string) ([]byte, error) {
	return func(ctx context.Context, version string) ([]byte, error) {
		src, err := st.CatalogVersionSource(ctx, version)
		if errors.Is(err, ledger.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s is not in the ledger", tools.ErrVersionUnknown, version)
		}
		return src, err
	}
}
