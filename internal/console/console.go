package console

import (
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/throttle"
	"github.com/maestro-run/maestro/tools"
)

// Path is where the console is served.
const Path = "/console/"

// Config holds the console's dependencies.
type Config struct {
	// API is the HTTP API the console acts through, in process.
	API http.Handler
	// Catalog names the operators and the tools' schemas.
	Catalog tools.Source
	// Store keeps the signed-in sessions, so every API process honours
	// them and a sign-out holds everywhere.
	Store ledger.Store
	// InsecureCookies drops the Secure attribute from the console's
	// cookies, for dev mode, which serves plain http on loopback. Optional:
	// default false, so cookies travel over https only.
	InsecureCookies bool
	// SessionTTL is how long a sign-in lasts. Optional: default 8h.
	SessionTTL time.Duration
	// PollInterval is how often the approval queue refreshes itself in the
	// browser. Optional: default 3s.
	PollInterval time.Duration
	// Throttle counts failed sign-ins per client address and refuses an
	// address that failed too often; share the API's, so an address has
	// one budget. Optional: default one of the console's own with
	// throttle's default limits.
	Throttle *throttle.Throttle
	// Logger. Optional: default slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns c with optional fields filled in.
func (c Config) WithDefaults() Config {
	if c.SessionTTL == 0 {
		c.SessionTTL = 8 * time.Hour
	}
	if c.PollInterval == 0 {
		c.PollInterval = 3 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Throttle == nil {
		c.Throttle = throttle.New(throttle.Config{Logger: c.Logger})
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.API == nil:
		return errors.New("console: the API handler is required")
	case c.Catalog == nil:
		return errors.New("console: a catalog is required")
	case c.Store == nil:
		return errors.New("console: a store is required")
	case c.SessionTTL < time.Minute:
		return errors.New("console: a session lasts at least a minute")
	}
	return nil
}

// Console serves the ops console.
type Console struct {
	cfg   Config
	mux   *http.ServeMux
	pages *pages
}

// New validates cfg and builds the console.
func New(cfg Config) (*Console, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Console{cfg: cfg, mux: http.NewServeMux()}
	p, err := parsePages(template.FuncMap{"argrows": c.argRows})
	if err != nil {
		return nil, err
	}
	c.pages = p
	c.routes()
	return c, nil
}

// Route serves the console under Path and everything else from next.
func Route(next http.Handler, c *Console) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/console" || len(r.URL.Path) >= len(Path) && r.URL.Path[:len(Path)] == Path {
			c.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (c *Console) routes() {
	c.mux.HandleFunc("GET /console", redirectTo("/console/approvals"))
	c.mux.HandleFunc("GET /console/{$}", redirectTo("/console/approvals"))
	c.mux.Handle("GET /console/static/", http.StripPrefix("/console/", http.FileServerFS(staticFS)))
	c.mux.HandleFunc("GET /console/signin", c.handleSignInForm)
	c.mux.HandleFunc("POST /console/signin", c.handleSignIn)
	c.mux.HandleFunc("POST /console/signout", c.signedIn(c.handleSignOut))

	c.mux.HandleFunc("GET /console/approvals", c.signedIn(c.handleQueue))
	c.mux.HandleFunc("GET /console/approvals/queue", c.signedIn(c.handleQueueFragment))
	c.mux.HandleFunc("GET /console/approvals/lookup", c.signedIn(c.handleApprovalLookup))
	c.mux.HandleFunc("GET /console/approvals/{id}", c.signedIn(c.handleApproval))
	c.mux.HandleFunc("POST /console/approvals/{id}/approve", c.signedIn(c.bound("id", "approve", c.handleApprove)))
	c.mux.HandleFunc("POST /console/approvals/{id}/reject", c.signedIn(c.bound("id", "reject", c.handleReject)))
	c.mux.HandleFunc("GET /console/approvals/{id}/modify", c.signedIn(c.handleModifyForm))
	c.mux.HandleFunc("POST /console/approvals/{id}/modify", c.signedIn(c.bound("id", "modify", c.handleModifyReview)))
	c.mux.HandleFunc("POST /console/approvals/{id}/modify/confirm", c.signedIn(c.bound("id", "modify/confirm", c.handleModifyConfirm)))

	c.mux.HandleFunc("GET /console/sessions", c.signedIn(c.handleSessions))
	c.mux.HandleFunc("GET /console/sessions/{id}", c.signedIn(c.handleSession))
	c.mux.HandleFunc("POST /console/sessions/{id}/rollback", c.signedIn(c.bound("id", "rollback", c.handleRollback)))
	c.mux.HandleFunc("POST /console/sessions/{id}/resolve", c.signedIn(c.bound("id", "resolve", c.handleResolve)))

	c.mux.HandleFunc("GET /console/reconciliations", c.signedIn(c.handleReconciliations))
	c.mux.HandleFunc("GET /console/reconciliations/{key}", c.signedIn(c.handleReconciliation))
	c.mux.HandleFunc("POST /console/reconciliations/{key}/check", c.signedIn(c.bound("key", "check", c.handleReconciliationCheck)))
	c.mux.HandleFunc("POST /console/reconciliations/{key}/resolve", c.signedIn(c.bound("key", "resolve", c.handleReconciliationResolve)))
	c.mux.HandleFunc("POST /console/reconciliations/{key}/retry", c.signedIn(c.bound("key", "retry", c.handleReconciliationRetry)))

	c.mux.HandleFunc("GET /console/refusals", c.signedIn(c.handleRefusals))
	c.mux.HandleFunc("GET /console/audit", c.signedIn(c.handleAudit))
	c.mux.HandleFunc("POST /console/sessions/{id}/facts", c.signedIn(c.bound("id", "facts", c.handleSetFact)))
	c.mux.HandleFunc("GET /console/catalog", c.signedIn(c.handleCatalog))
	c.mux.HandleFunc("POST /console/catalog/reload", c.signedIn(c.handleCatalogReload))
	c.mux.HandleFunc("GET /console/canary", c.signedIn(c.handleCanary))
	c.mux.HandleFunc("POST /console/canary/run", c.signedIn(c.handleCanaryRun))
	c.mux.HandleFunc("/console/", c.handleNotFound)
}

// maxFormBytes caps a console form: the largest is a modified argument
// set, which the API caps well below this.
const maxFormBytes = 64 << 10

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// The console renders everything itself: no frames, no foreign
	// scripts, no sniffing, no referrer leaking IDs in URLs.
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	}
	c.mux.ServeHTTP(w, r)
}

func redirectTo(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, path, http.StatusSeeOther)
	}
}

func (c *Console) handleNotFound(w http.ResponseWriter, r *http.Request) {
	c.renderError(w, r, http.StatusNotFound, "There is no console page at "+r.URL.Path+".")
}
