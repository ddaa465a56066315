// Package service assembles a running maestro: the registry mirror, the
// Temporal worker and the HTTP API, from dependencies the caller provides.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/maestro-run/maestro/activities"
	"github.com/maestro-run/maestro/admission"
	"github.com/maestro-run/maestro/api"
	"github.com/maestro-run/maestro/callback"
	"github.com/maestro-run/maestro/connectors"
	"github.com/maestro-run/maestro/outbox"
	"github.com/maestro-run/maestro/store"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/transcriptref"
	"github.com/maestro-run/maestro/workflows"
)

// Config holds what a maestro process needs.
type Config struct {
	Store      store.Store
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
	// TokenTTL is the lifetime of an approval's single-use token.
	// Optional: default 300s.
	TokenTTL time.Duration
	// SweepEvery is how often the sweep finishes invocations whose
	// workflow ended without finishing them. Optional: default 1m.
	SweepEvery time.Duration
	// SweepIdle: see activities.Config. Optional.
	SweepIdle time.Duration
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
	// Getenv reads the agents' callback signing secrets, named in the
	// catalog. Optional: default os.Getenv.
	Getenv func(string) string
	// LoopbackCallbacks lets an agent's callback URL be plain http to a
	// loopback host, as dev mode's agents on this machine need. Optional:
	// default false, so every callback goes over https.
	LoopbackCallbacks bool
	// Callbacks tunes the callback relay; its Store and Secrets are set
	// here. Optional: see callback.Config.
	Callbacks callback.Config
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
	// answer, so it must outlast the longest handler: the invocation wait
	// and a rollback's compensations. Optional: default the wait timeout
	// plus 90s.
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
func (c Config) WithDefaults() Config {
	if c.HTTPAddr == "" {
		c.HTTPAddr = "127.0.0.1:8080"
	}
	if c.TaskQueue == "" {
		c.TaskQueue = workflows.TaskQueue
	}
	if c.SweepEvery == 0 {
		c.SweepEvery = time.Minute
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

// Service is a running maestro.
type Service struct {
	worker   worker.Worker
	http     *http.Server
	listener net.Listener
	done     chan error
	// stopRelay ends the outbox and callback relays; relayDone and
	// callbacksDone close when they have.
	stopRelay     context.CancelFunc
	relayDone     chan struct{}
	callbacksDone chan struct{}
}

// Start mirrors the catalog into the registry, starts the worker and serves
// the API. It returns once the API is listening.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	cfg = cfg.WithDefaults()
	if cfg.Store == nil || cfg.Catalog == nil || cfg.Temporal == nil || cfg.Connectors == nil {
		return nil, errors.New("service: store, catalog, Temporal client and connectors are required")
	}
	if err := cfg.Transcripts.Validate(); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	callbacks, err := newCallbackRelay(cfg)
	if err != nil {
		return nil, err
	}
	if err := cfg.Store.ToolRegistrySync(ctx, RegistryRows(cfg.Catalog)); err != nil {
		return nil, fmt.Errorf("error mirroring catalog to tool_registry: %w", err)
	}
	gate, err := admission.New(admission.Config{
		Store: cfg.Store, Catalog: cfg.Catalog, Temporal: cfg.Temporal,
		TaskQueue: cfg.TaskQueue, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	acts, err := activities.New(activities.Config{
		Store: cfg.Store, Catalog: cfg.Catalog, Connectors: cfg.Connectors, Gate: gate, Temporal: cfg.Temporal,
		LeaseTTL: cfg.LeaseTTL, TokenTTL: cfg.TokenTTL, SweepIdle: cfg.SweepIdle, ListingLag: cfg.ListingLag, Logger: cfg.Logger, Transcripts: cfg.Transcripts,
	})
	if err != nil {
		return nil, err
	}
	w := worker.New(cfg.Temporal, cfg.TaskQueue, worker.Options{})
	Register(w, acts)
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
	relay, err := outbox.New(outbox.Config{Store: cfg.Store, Signaller: cfg.Signaller, TokenTTL: cfg.TokenTTL, Logger: cfg.Logger})
	if err != nil {
		w.Stop()
		return nil, err
	}
	srv, err := api.New(api.Config{
		Store: cfg.Store, Catalog: cfg.Catalog, Gate: gate, Temporal: cfg.Temporal, Reconciler: acts, Finalizer: acts,
		WaitTimeout: cfg.WaitTimeout, TokenTTL: cfg.TokenTTL, Logger: cfg.Logger,
		TwilioAuthToken: cfg.TwilioAuthToken, PublicURL: cfg.PublicURL, Transcripts: cfg.Transcripts, Outbox: relay,
	})
	if err != nil {
		w.Stop()
		return nil, err
	}
	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			w.Stop()
			return nil, fmt.Errorf("error listening on %s: %w", cfg.HTTPAddr, err)
		}
	}
	s := &Service{
		worker:   w,
		listener: ln,
		http: &http.Server{
			Handler:           srv,
			ReadHeaderTimeout: cfg.Timeouts.ReadHeader,
			ReadTimeout:       cfg.Timeouts.Read,
			WriteTimeout:      cfg.Timeouts.Write,
			IdleTimeout:       cfg.Timeouts.Idle,
		},
		done: make(chan error, 1),
	}
	go func() { s.done <- s.http.Serve(ln) }()
	// The relay's first sweep delivers what a previous process left owed.
	relayCtx, stopRelay := context.WithCancel(context.WithoutCancel(ctx))
	s.stopRelay, s.relayDone, s.callbacksDone = stopRelay, make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.relayDone)
		relay.Run(relayCtx)
	}()
	go func() {
		defer close(s.callbacksDone)
		callbacks.Run(relayCtx)
	}()
	return s, nil
}

// Register registers maestro's workflows and activities on a worker.
func Register(w worker.Registry, acts *activities.Activities) {
	workflows.Register(w)
	acts.Register(w)
}

// URL is the API's base URL.
func (s *Service) URL() string {
	return "http://" + s.listener.Addr().String()
}

// Stop shuts the API down gracefully and stops the worker.
func (s *Service) Stop(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	s.stopRelay()
	<-s.relayDone
	<-s.callbacksDone
	s.worker.Stop()
	if serveErr := <-s.done; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}

// RegistryRows is the catalog as mirrored into the ledger's tool_registry,
// which the audit reads next to the approval records.
func RegistryRows(c *tools.Catalog) []store.ToolRegistryRow {
	rows := c.RegistryRows()
	out := make([]store.ToolRegistryRow, len(rows))
	for i, r := range rows {
		out[i] = store.ToolRegistryRow{
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
