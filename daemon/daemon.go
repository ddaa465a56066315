package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

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
		return &StartError{What: "loading the catalog " + catalogName(cfg), Err: err,
			Fix: "correct every row and field named above (docs/catalog.md describes them), then start again"}
	}
	if d.store, err = openStore(ctx, cfg); err != nil {
		return &StartError{What: "opening the ledger", Err: err, Fix: storeFix(cfg)}
	}
	if err = d.store.Migrate(ctx); err != nil {
		return &StartError{What: "migrating the ledger", Err: err, Fix: "check that the DATABASE_URL role may create tables in its schema"}
	}
	if err = d.dialTemporal(ctx); err != nil {
		return &StartError{What: "connecting to Temporal", Err: err, Fix: temporalFix(cfg)}
	}
	// Listen before the connectors exist: in dev mode the API's own
	// address is the callback URL Twilio is given with every message.
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return &StartError{What: "listening on " + cfg.HTTPAddr, Err: err, Fix: "choose a free address with --http-addr or MAESTRO_HTTP_ADDR"}
	}
	defer func() {
		if err != nil {
			_ = ln.Close()
		}
	}()
	d.publicURL = cfg.PublicURL
	if d.publicURL == "" && cfg.Dev {
		d.publicURL = "http://" + ln.Addr().String()
	}
	if d.publicURL == "" {
		cfg.Logger.Warn("MAESTRO_PUBLIC_URL is not set: Twilio will not report delivery, so a text's outcome ends at accepted")
	}
	conns, err := d.connectors()
	if err != nil {
		return &StartError{What: "configuring the connectors", Err: err, Fix: "set the provider settings named above"}
	}
	d.service, err = service.Start(ctx, service.Config{
		Store:       d.store,
		Catalog:     d.Catalog,
		Temporal:    d.client,
		Connectors:  conns,
		Listener:    ln,
		PublicURL:   d.publicURL,
		TaskQueue:   cfg.TaskQueue,
		WaitTimeout: cfg.WaitTimeout,
		TokenTTL:    cfg.TokenTTL,
		Logger:      cfg.Logger,

		TwilioAuthToken: d.twilioAuthToken(),
	})
	if err != nil {
		return &StartError{What: "starting the worker and the API", Err: err, Fix: "see the cause above"}
	}
	return nil
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
	if d.service != nil {
		errs = append(errs, d.service.Stop(ctx))
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

func openStore(ctx context.Context, cfg Config) (store.Store, error) {
	if cfg.DatabaseURL != "" {
		return store.OpenPostgres(ctx, cfg.DatabaseURL)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("error creating data directory: %w", err)
	}
	return store.OpenSQLite(ctx, cfg.ledgerPath())
}

func (d *Daemon) dialTemporal(ctx context.Context) error {
	addr := d.cfg.TemporalAddress
	if addr == "" {
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
	if d.publicURL != "" {
		p.Twilio.StatusCallback = api.TwilioStatusCallbackURL(d.publicURL)
	}
	return connectors.NewSet(p.Twilio, p.SES, connectors.HTTPConfig{Services: p.HTTP})
}
