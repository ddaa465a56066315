package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/maestro-run/maestro/api"
	"github.com/maestro-run/maestro/connectors"
	"github.com/maestro-run/maestro/service"
	"github.com/maestro-run/maestro/standin"
	"github.com/maestro-run/maestro/store"
	"github.com/maestro-run/maestro/temporalx/devtemporal"
	"github.com/maestro-run/maestro/tools"
)

// Daemon is a running maestro process.
type Daemon struct {
	cfg      Config
	Catalog  *tools.Catalog
	temporal *devtemporal.Server // nil unless embedded
	client   client.Client
	store    store.Store
	standins *standin.Set // nil outside dev mode
	service  *service.Service
	// publicURL is where providers reach the API; empty when unknown.
	publicURL string
	// listener is the API's socket, served first by starting (answering
	// /readyz while dependencies come up) and then by the service.
	listener *handoff
	starting *http.Server // nil once the service serves
	ready    readiness
}

// Start brings up every part and returns once the API listens. On error,
// whatever was started is stopped again, and the error says what failed
// and how to fix it.
func Start(ctx context.Context, cfg Config) (*Daemon, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, &StartError{What: "checking the configuration", Err: err, Fix: "set the settings named above (see --help)"}
	}
	d := &Daemon{cfg: cfg}
	if err := d.start(ctx); err != nil {
		_ = d.Stop(context.Background())
		return nil, err
	}
	return d, nil
}

func (d *Daemon) start(ctx context.Context) (err error) {
	cfg := d.cfg
	if d.Catalog, err = loadCatalog(cfg); err != nil {
		return &StartError{What: "loading the catalog " + catalogName(cfg), Err: err, Fix: catalogFix(err)}
	}
	// Listen before waiting for PostgreSQL and Temporal, so /readyz can say
	// which one is missing, and before the connectors exist: in dev mode
	// the API's own address is the callback URL Twilio is given.
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return &StartError{What: "listening on " + cfg.HTTPAddr, Err: err, Fix: "choose a free address with --http-addr or MAESTRO_HTTP_ADDR"}
	}
	d.listener = newHandoff(ln)
	d.ready.set(dependencyPostgres, nil)
	d.starting = &http.Server{Handler: api.StartingHandler(d.ready.get), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = d.starting.Serve(d.listener.view(false)) }()

	// Connector settings are checked before the wait, so that a missing
	// one is reported at once rather than after PostgreSQL comes up.
	d.publicURL = cfg.PublicURL
	if d.publicURL == "" && cfg.Dev {
		d.publicURL = "http://" + ln.Addr().String()
	}
	if d.publicURL == "" {
		cfg.Logger.Warn("MAESTRO_PUBLIC_URL is not set: Twilio will not report delivery, so a text's outcome ends at accepted")
	}
	conns, err := d.connectors()
	if err != nil {
		return &StartError{What: "configuring the connectors", Err: err, Fix: providersFix}
	}

	deadline := time.Now().Add(cfg.DependencyTimeout)
	if err = d.openStore(ctx, deadline); err != nil {
		return &StartError{What: "opening the ledger", Err: err, Fix: storeFix(cfg)}
	}
	if err = d.store.Migrate(ctx); err != nil {
		return &StartError{What: "migrating the ledger", Err: err, Fix: "check that the DATABASE_URL role may create tables in its schema"}
	}
	if err = d.dialTemporal(ctx, deadline); err != nil {
		return &StartError{What: "connecting to Temporal", Err: err, Fix: temporalFix(cfg)}
	}
	d.service, err = service.Start(ctx, service.Config{
		Store:       d.store,
		Catalog:     d.Catalog,
		Temporal:    d.client,
		Connectors:  conns,
		Listener:    d.listener.view(true),
		PublicURL:   d.publicURL,
		TaskQueue:   cfg.TaskQueue,
		WaitTimeout: cfg.WaitTimeout,
		TokenTTL:    cfg.TokenTTL,
		Logger:      cfg.Logger,
		Transcripts: cfg.transcripts(),

		TwilioAuthToken: d.twilioAuthToken(),
		// Dev mode's agents run on this machine and need no certificate.
		LoopbackCallbacks: cfg.Dev,
	})
	if err != nil {
		return &StartError{What: "starting the worker and the API", Err: err, Fix: "see the cause above"}
	}
	// The API serves the socket now; the start-up server finishes the
	// requests it holds and lets go.
	d.stopStarting(ctx)
	return nil
}

// stopStarting shuts the start-up server down without closing the socket.
func (d *Daemon) stopStarting(ctx context.Context) {
	if d.starting == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := d.starting.Shutdown(ctx); err != nil {
		_ = d.starting.Close()
	}
	d.starting = nil
}

// Run starts maestro, prints how to reach it, and serves until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	d, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	d.PrintBanner(os.Stdout)
	<-ctx.Done()
	d.cfg.Logger.Info("shutting down")
	return d.Stop(context.Background())
}

// URL is the API's base URL.
func (d *Daemon) URL() string { return d.service.URL() }

// Standins are dev mode's provider stand-ins, or nil.
func (d *Daemon) Standins() *standin.Set { return d.standins }

// Store is the ledger.
func (d *Daemon) Store() store.Store { return d.store }

// TemporalAddress is the frontend of the Temporal server maestro runs on:
// the embedded one in dev mode, else the configured cluster.
func (d *Daemon) TemporalAddress() string {
	if d.temporal != nil {
		return d.temporal.HostPort()
	}
	return d.cfg.TemporalAddress
}

// Namespace is the Temporal namespace maestro's workflows run in.
func (d *Daemon) Namespace() string { return d.cfg.Namespace }

// Stop stops every part that was started, in reverse order.
func (d *Daemon) Stop(ctx context.Context) error {
	if d == nil {
		return nil
	}
	var errs []error
	d.stopStarting(ctx)
	if d.service != nil {
		errs = append(errs, d.service.Stop(ctx))
	} else if d.listener != nil {
		errs = append(errs, d.listener.close())
	}
	if d.client != nil {
		d.client.Close()
	}
	if d.temporal != nil {
		errs = append(errs, d.temporal.Stop())
	}
	if d.standins != nil {
		errs = append(errs, d.standins.Close())
	}
	if d.store != nil {
		errs = append(errs, d.store.Close())
	}
	return errors.Join(errs...)
}

func loadCatalog(cfg Config) (*tools.Catalog, error) {
	if cfg.CatalogPath == "" {
		return tools.Load(tools.DemoCatalogYAML)
	}
	return tools.LoadFile(cfg.CatalogPath)
}

// openStore opens the ledger: PostgreSQL, waited for until deadline, or
// dev mode's SQLite file.
func (d *Daemon) openStore(ctx context.Context, deadline time.Time) error {
	if d.cfg.DatabaseURL == "" {
		d.ready.set(dependencyPostgres, nil)
		if err := os.MkdirAll(d.cfg.DataDir, 0o755); err != nil {
			return fmt.Errorf("error creating data directory: %w", err)
		}
		s, err := store.OpenSQLite(ctx, d.cfg.ledgerPath())
		d.store = s
		return err
	}
	// Only reaching PostgreSQL is bounded by the dependency deadline: the
	// migrations and grants that follow take as long as they take.
	err := d.waitFor(ctx, dependencyPostgres, "PostgreSQL at "+postgresHost(d.cfg.DatabaseURL), deadline, func(ctx context.Context) error {
		s, err := store.OpenPostgres(ctx, d.cfg.DatabaseURL)
		if err != nil {
			return err
		}
		return s.Close()
	})
	if err != nil {
		return err
	}
	d.store, err = store.OpenPostgresService(ctx, d.cfg.DatabaseURL, d.cfg.DatabaseServiceRole)
	return err
}

func (d *Daemon) dialTemporal(ctx context.Context, deadline time.Time) error {
	addr := d.cfg.TemporalAddress
	external := addr != ""
	if !external {
		d.ready.set(dependencyTemporal, nil)
		srv, err := devtemporal.Start(ctx, devtemporal.Config{
			DataDir:   d.cfg.temporalDir(),
			Namespace: d.cfg.Namespace,
			Port:      d.cfg.TemporalPort,
		})
		if err != nil {
			return fmt.Errorf("error starting embedded Temporal: %w", err)
		}
		d.temporal = srv
		addr = srv.HostPort()
	}
	dial := func(ctx context.Context) error {
		c, err := client.DialContext(ctx, client.Options{
			HostPort:  addr,
			Namespace: d.cfg.Namespace,
			Logger:    sdklog.NewStructuredLogger(d.cfg.Logger.With("component", "temporal-sdk")),
		})
		if err != nil {
			return fmt.Errorf("error connecting to Temporal at %s: %w", addr, err)
		}
		d.client = c
		return nil
	}
	if !external {
		return dial(ctx)
	}
	return d.waitFor(ctx, dependencyTemporal, "Temporal at "+addr, deadline, dial)
}

func (d *Daemon) connectors() (connectors.Set, error) {
	p := d.cfg.Providers
	if d.cfg.Dev {
		set, err := standin.Start()
		if err != nil {
			return nil, fmt.Errorf("error starting provider stand-ins: %w", err)
		}
		d.standins = set
		p = Providers{Twilio: set.TwilioConfig(), SES: set.SESConfig(), HTTP: set.HTTPServices()}
	}
	if err := checkHTTPServices(d.Catalog, p.HTTP); err != nil {
		return nil, err
	}
	if d.publicURL != "" {
		p.Twilio.StatusCallback = api.TwilioStatusCallbackURL(d.publicURL)
	}
	if d.cfg.Dev {
		return connectors.NewSet(p.Twilio, p.SES, connectors.HTTPConfig{Services: p.HTTP})
	}
	return connectors.NewSetFor(catalogKinds(d.Catalog), p.Twilio, p.SES, connectors.HTTPConfig{Services: p.HTTP})
}

// catalogKinds lists the connector kinds the catalog's tools use: only
// their providers need credentials.
func catalogKinds(c *tools.Catalog) []connectors.Kind {
	var kinds []connectors.Kind
	for _, t := range c.Tools() {
		kinds = append(kinds, connectors.Kind(t.Connector.Kind))
	}
	return kinds
}
