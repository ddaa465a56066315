package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/internal/api"
	"github.com/maestro-run/maestro/internal/codec"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/privatefs"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/telemetry"
	"github.com/maestro-run/maestro/internal/throttle"
	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Server is a running maestro process.
type Server struct {
	cfg Config
	// Catalog is the catalog loaded at start; Service().Catalog() is the
	// one served now.
	Catalog *tools.Catalog
	// providers are the connector settings, which a reloaded catalog's
	// tools must find as a start's do.
	providers Providers
	temporal  *devtemporal.Server // nil unless embedded
	client    client.Client
	codec     *codec.Codec
	store     ledger.Store
	standins  *standin.Set // nil outside dev mode
	telemetry *telemetry.Telemetry
	service   *Core
	// publicURL is where providers reach the API; empty when unknown.
	publicURL string
	// listener is the API's socket, served first by starting (answering
	// /readyz while dependencies come up) and then by the
	listener *handoff
	starting *http.Server // nil once the service serves
	ready    readiness
}

// Start brings up every part and returns once the API listens. On error,
// whatever was started is stopped again, and the error says what failed
// and how to fix it.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, &StartError{What: "checking the configuration", Err: err, Fix: "set the settings named above (see --help)"}
	}
	d := &Server{cfg: cfg}
	if err := d.start(ctx); err != nil {
		_ = d.Stop(context.Background())
		return nil, err
	}
	return d, nil
}

func (d *Server) start(ctx context.Context) (err error) {
	cfg := d.cfg
	if d.Catalog, err = loadCatalog(cfg); err != nil {
		return &StartError{What: "loading the catalog " + catalogName(cfg), Err: err, Fix: catalogFix(err)}
	}
	cfg.DrainTimeout = drainWindow(cfg, d.Catalog)
	d.cfg.DrainTimeout = cfg.DrainTimeout
	if err := checkBudgets(cfg, d.Catalog); err != nil {
		return &StartError{What: "checking the catalog " + catalogName(cfg), Err: err, Fix: budgetFix}
	}
	if err := checkKeys(cfg, d.Catalog); err != nil {
		return &StartError{What: "checking the catalog " + catalogName(cfg), Err: err, Fix: demoKeysFix}
	}
	if v := fenceViolations(d.Catalog); len(v) > 0 {
		return &StartError{What: "checking the catalog " + catalogName(cfg), Err: errors.New(strings.Join(v, "\n")), Fix: fenceFix}
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
	starting := &http.Server{Handler: api.StartingHandler(d.ready.get), ReadHeaderTimeout: 10 * time.Second}
	d.starting = starting
	// The goroutine keeps its own reference: a failed start clears
	// d.starting, possibly before this goroutine has run.
	go func() { _ = starting.Serve(d.listener.view(false)) }()

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

	if cfg.usesDataDir() {
		if err := privatefs.MkdirAll(cfg.DataDir); err != nil {
			return &StartError{What: "creating the data directory " + cfg.DataDir, Err: err, Fix: "choose a directory this user may create with --data-dir or MAESTRO_DATA_DIR"}
		}
	}
	if d.codec, err = loadCodec(cfg); err != nil {
		return &StartError{What: "loading the codec keys", Err: err, Fix: codecFix}
	}
	cfg.Logger.Info("Temporal payloads are encrypted", "active_key", d.codec.ActiveKeyID(), "keys", d.codec.KeyIDs())

	tcfg := cfg.Telemetry
	tcfg.Logger = cfg.Logger
	if d.telemetry, err = telemetry.New(ctx, tcfg); err != nil {
		return &StartError{What: "setting up metrics and traces", Err: err, Fix: "correct the OTEL_EXPORTER_OTLP_* setting named above, or unset it to turn tracing off"}
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
	d.service, err = StartCore(ctx, CoreConfig{
		Role:         cfg.Role,
		DrainTimeout: cfg.DrainTimeout,
		Store:        d.store,
		Catalog:      d.Catalog,
		Temporal:     d.client,
		Connectors:   conns,
		Listener:     d.listener.view(true),
		PublicURL:    d.publicURL,
		TaskQueue:    cfg.TaskQueue,
		WaitTimeout:  cfg.WaitTimeout,
		Timeouts:     HTTPTimeouts{Write: cfg.WriteTimeout},
		RollbackWait: cfg.RollbackWait,
		TokenTTL:     cfg.TokenTTL,
		Logger:       cfg.Logger,
		Transcripts:  cfg.transcripts(),
		Codec:        d.codec,
		CodecOrigin:  cfg.CodecOrigin,
		CatalogFile:  func() ([]byte, error) { return catalogFile(cfg) },
		CatalogPoll:  cfg.CatalogPoll,
		Canary:       d.canaryConfig(),
		Telemetry:    d.telemetry,
		Throttle:     throttle.Config{TrustedProxies: cfg.TrustedProxies},
		CheckCatalog: func(cat *tools.Catalog) error {
			return errors.Join(checkKeys(cfg, cat), checkProviders(cat, d.providers), checkBudgets(cfg, cat))
		},

		TwilioAuthToken: d.twilioAuthToken(),
		// Dev mode's agents run on this machine and need no certificate.
		LoopbackCallbacks: cfg.Dev,
		InsecureCookies:   cfg.Dev,
	})
	if err != nil {
		return &StartError{What: "starting the " + roleParts(cfg.Role), Err: err, Fix: "see the cause above"}
	}
	// The API serves the socket now; the start-up server finishes the
	// requests it holds and lets go.
	d.stopStarting(ctx)
	return nil
}

// stopStarting shuts the start-up server down without closing the socket.
func (d *Server) stopStarting(ctx context.Context) {
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
	d.cfg.Logger.Info("maestro started", "role", string(d.cfg.Role), "catalog", d.Catalog.Hash())
	for waiting := true; waiting; {
		select {
		case <-ctx.Done():
			waiting = false
		case <-d.cfg.Reload:
			d.reloadCatalog(ctx)
		}
	}
	d.cfg.Logger.Info("draining: finishing the work in flight, taking no more", "drain_timeout", d.cfg.DrainTimeout)
	err = d.Stop(context.Background())
	d.cfg.Logger.Info("stopped")
	return err
}

// roleParts names what a process in role r starts.
func roleParts(r Role) string {
	switch r {
	case RoleAPI:
		return "API"
	case RoleWorker:
		return "worker"
	}
	return "worker and the API"
}

// URL is the API's base URL.
func (d *Server) URL() string { return d.service.URL() }

// Standins are dev mode's provider stand-ins, or nil.
func (d *Server) Standins() *standin.Set { return d.standins }

// Store is the ledger.
func (d *Server) Store() ledger.Store { return d.store }

// TemporalAddress is the frontend of the Temporal server maestro runs on:
// the embedded one in dev mode, else the configured cluster.
func (d *Server) TemporalAddress() string {
	if d.temporal != nil {
		return d.temporal.HostPort()
	}
	return d.cfg.TemporalAddress
}

// Codec is the codec maestro encrypts its Temporal payloads with: any
// other client of its namespace needs it to read them.
func (d *Server) Codec() *codec.Codec { return d.codec }

// Namespace is the Temporal namespace maestro's workflows run in.
func (d *Server) Namespace() string { return d.cfg.Namespace }

// Stop stops every part that was started, in reverse order.
func (d *Server) Stop(ctx context.Context) error {
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
	if d.telemetry != nil {
		// Flushes the spans still buffered.
		errs = append(errs, d.telemetry.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

func loadCatalog(cfg Config) (*tools.Catalog, error) {
	data, err := catalogFile(cfg)
	if err != nil {
		return nil, err
	}
	return tools.Load(data)
}

// catalogFile reads the catalog file, or the embedded demo catalog.
func catalogFile(cfg Config) ([]byte, error) {
	if cfg.CatalogPath == "" {
		return tools.DemoCatalogYAML, nil
	}
	data, err := os.ReadFile(cfg.CatalogPath)
	if err != nil {
		return nil, fmt.Errorf("error reading tool catalog: %w", err)
	}
	return data, nil
}

// reloadCatalog answers a reload signal, in the log: there is no one else
// to tell.
func (d *Server) reloadCatalog(ctx context.Context) {
	res, err := d.service.ReloadCatalog(ctx)
	switch {
	case len(res.Violations) > 0:
		d.cfg.Logger.Error("catalog reload refused: the catalog in use is kept", "kept", res.Version, "violations", res.Violations)
	case err != nil:
		d.cfg.Logger.Error("catalog reload failed: the catalog in use is kept", "kept", res.Version, "err", err)
	default:
		d.cfg.Logger.Info("catalog reloaded", "version", res.Version, "previous", res.Previous, "changed", res.Changed)
	}
}

// Service is the running core, which serves and reloads the catalog.
func (d *Server) Service() *Core { return d.service }

// openStore opens the ledger: PostgreSQL, waited for until deadline, or
// dev mode's SQLite file.
func (d *Server) openStore(ctx context.Context, deadline time.Time) error {
	if d.cfg.DatabaseURL == "" {
		d.ready.set(dependencyPostgres, nil)
		// Private before SQLite opens it, so its -wal and -shm are too.
		if _, err := privatefs.SQLiteFile(d.cfg.ledgerPath()); err != nil {
			return err
		}
		s, err := ledger.OpenSQLite(ctx, d.cfg.ledgerPath())
		d.store = s
		return err
	}
	// Reaching PostgreSQL is bounded by the dependency deadline; the
	// migrations and grants that follow take as long as they take. A
	// PostgreSQL that restarts under them loses their connection: both are
	// safe to run again, and are, once it answers again, until a deadline
	// as long; anything else they meet stops the start.
	label := "PostgreSQL at " + postgresHost(d.cfg.DatabaseURL)
	reach := func(ctx context.Context) error {
		s, err := ledger.OpenPostgres(ctx, d.cfg.DatabaseURL)
		if err != nil {
			return err
		}
		return s.Close()
	}
	if err := d.waitFor(ctx, dependencyPostgres, label, deadline, reach); err != nil {
		return err
	}
	reopenBy := time.Now().Add(d.cfg.DependencyTimeout)
	for {
		var err error
		d.store, err = ledger.OpenPostgresService(ctx, d.cfg.DatabaseURL, d.cfg.DatabaseServiceRole)
		if !ledger.ConnectionLost(err) || time.Now().After(reopenBy) {
			return err
		}
		d.cfg.Logger.Warn("lost PostgreSQL while opening the ledger; opening it again", "error", err)
		if err := d.waitFor(ctx, dependencyPostgres, label, reopenBy, reach); err != nil {
			return err
		}
	}
}

func (d *Server) dialTemporal(ctx context.Context, deadline time.Time) error {
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
	// The embedded server speaks plain TCP on loopback.
	auth := d.cfg.TemporalAuth
	if !external {
		auth = TemporalAuth{}
	}
	opts, err := temporalClientOptions(addr, d.cfg.Namespace, auth, d.cfg.Logger)
	if err != nil {
		return err
	}
	if opts, err = d.telemetry.ClientOptions(opts); err != nil {
		return err
	}
	dial := func(ctx context.Context) error {
		c, err := client.DialContext(ctx, d.codec.Apply(opts))
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

// loadCodec loads the configured keys or, in dev mode without any, dev
// mode's own key.
func loadCodec(cfg Config) (*codec.Codec, error) {
	keys := cfg.Codec
	if keys.Empty() && cfg.Dev {
		var err error
		if keys, err = codec.DevKeyDir(cfg.devCodecDir()); err != nil {
			return nil, err
		}
	}
	return codec.Load(keys)
}

func (d *Server) connectors() (connectors.Set, error) {
	p := d.cfg.Providers
	if d.cfg.Dev {
		set, err := standin.Start()
		if err != nil {
			return nil, fmt.Errorf("error starting provider stand-ins: %w", err)
		}
		d.standins = set
		p = Providers{Twilio: set.TwilioConfig(), SES: set.SESConfig(), HTTP: set.HTTPServices()}
	}
	d.providers = p
	if err := checkProviders(d.Catalog, p); err != nil {
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
func catalogKinds(c *tools.Catalog) []maestrotype.ConnectorKind {
	var kinds []maestrotype.ConnectorKind
	for _, t := range c.Tools() {
		kinds = append(kinds, t.Connector.Kind)
	}
	kinds = append(kinds, notifyKinds(c)...)
	return kinds
}
