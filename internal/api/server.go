package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/answer"
	"github.com/maestro-run/maestro/internal/canary"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/outbox"
	"github.com/maestro-run/maestro/internal/throttle"
	"github.com/maestro-run/maestro/internal/transcriptref"
	"github.com/maestro-run/maestro/tools"
)

// DefaultWaitTimeout is how long POST /v1/invocations waits for a result
// unless Config.WaitTimeout says otherwise.
const DefaultWaitTimeout = 15 * time.Second

// Config holds the server's dependencies and limits.
type Config struct {
	Store    ledger.Store
	Catalog  tools.Source
	Gate     *admission.Gate
	Temporal client.Client
	// Reconciler settles effects held for reconciliation.
	Reconciler Reconciler
	// Finalizer finishes an invocation whose workflow ended without
	// finishing it, when its key is re-sent or it is polled. Optional:
	// without it, only the scheduled sweep does.
	Finalizer Finalizer
	// TwilioAuthToken verifies X-Twilio-Signature on Twilio's status
	// callbacks: the auth token of the account maestro sends from.
	// Optional: without it every callback is refused.
	TwilioAuthToken string
	// PublicURL is the base URL Twilio reaches maestro at, and so the one
	// its status callbacks are signed over. Optional: default the URL each
	// callback reached maestro at (Host, X-Forwarded-Proto).
	PublicURL string
	// WaitTimeout is how long POST /v1/invocations waits for a result
	// before answering 202. Optional: default 15s.
	WaitTimeout time.Duration
	// Answers hears when a worker in this process commits an outcome, so
	// a waiting request answers without waiting for the workflow to
	// complete. Optional: default nil, the workflow's completion.
	Answers *answer.Board
	// TokenTTL is the lifetime of the single-use token an approval mints.
	// Optional: default 300s.
	TokenTTL time.Duration
	// MaxBodyBytes caps request bodies. Optional: default 64 KiB.
	MaxBodyBytes int64
	// MaxDrainBytes is how much of an oversized body the server reads and
	// discards before answering 413: a server that answers and closes
	// while the client is still sending resets the connection, and the
	// client never reads the answer. Bodies larger still are cut off.
	// Optional: default 16 MiB.
	MaxDrainBytes int64
	// Transcripts says which transcript_ref URLs POST
	// /v1/sessions/{id}/end accepts; the worker checks again when it
	// fetches. Optional: the zero policy refuses every transcript_ref.
	Transcripts transcriptref.Policy
	// Logger. Optional: default slog.Default().
	Logger *slog.Logger
	// PlatformSecrets holds each platform agent's secret (see the
	// catalog's platform blocks), by agent ID. Optional: a platform agent
	// without one has every request refused.
	PlatformSecrets map[string][]byte
	// LoopbackCallbacks lets a live call's control URL, to which a pending
	// call's result is pushed, be a loopback host, over plain http or not,
	// whatever the agent's control_hosts say (dev mode). Otherwise only
	// https control URLs on those hosts are pushed to.
	LoopbackCallbacks bool
	// Ready says whether this process should be sent work, for GET
	// /readyz. Optional: default always ready.
	Ready func(context.Context) apitype.Readiness
	// Outbox delivers the signals a decision or a call's end queued with
	// it in the ledger. Optional: default a relay over Temporal that makes
	// the first attempt only; a relay's Run loop makes the rest.
	Outbox Deliverer
	// Replays remembers the platform signatures already accepted.
	// Optional: default Store, which every API process on the ledger
	// shares.
	Replays ReplayGuard
	// Codec decodes the payloads of maestro's encrypted workflow
	// histories for operators, at POST /codec/{namespace}/decode (or
	// /codec/decode): the Temporal UI and CLI call it. Optional: without
	// it that route answers 404.
	Codec converter.PayloadCodec
	// CodecOrigin is the one browser origin (the Temporal UI's, such as
	// https://temporal.example.com) allowed to call the codec endpoint
	// across origins. Optional: default none, so only non-browser clients
	// such as the CLI.
	CodecOrigin string
	// ReloadCatalog re-reads this process's catalog file and swaps to it
	// if it passes every check, for POST /v1/catalog/reload. Optional:
	// without it that route answers 404.
	ReloadCatalog func(context.Context) (apitype.CatalogReload, error)
	// Canary is the reality canary's state: GET /v1/canary reads it, and
	// tools it withholds are neither listed nor called. Optional: without
	// it nothing is withheld and the canary routes answer 404.
	Canary *canary.State
	// RunCanary runs the canary now and returns its run ID, for POST
	// /v1/canary/run. Optional: without it that route answers 404.
	RunCanary func(context.Context) (string, error)
	// Throttle counts failed key checks per client address and refuses,
	// 429 with Retry-After, an address that failed too often; a process
	// shares one with its MCP endpoint and console, so an address has one
	// budget. Optional: default one of the API's own with throttle's
	// default limits.
	Throttle *throttle.Throttle
}

// Deliverer makes one attempt at a queued signal and records the outcome;
// a failed signal stays owed.
type Deliverer interface {
	Deliver(ctx context.Context, sig ledger.OutboxSignal) error
	// Send makes one attempt at a signal not queued yet and records
	// nothing: the caller queues it with the attempt's outcome.
	Send(ctx context.Context, sig ledger.OutboxSignal) error
}

// WithDefaults returns c with optional fields filled in.
func (c Config) WithDefaults() Config {
	if c.WaitTimeout == 0 {
		c.WaitTimeout = DefaultWaitTimeout
	}
	if c.TokenTTL == 0 {
		c.TokenTTL = approval.DefaultTokenTTL
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 64 << 10
	}
	if c.MaxDrainBytes == 0 {
		c.MaxDrainBytes = 16 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Replays == nil && c.Store != nil {
		c.Replays = c.Store
	}
	if c.Throttle == nil {
		c.Throttle = throttle.New(throttle.Config{Logger: c.Logger})
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("api: a store is required")
	case c.Catalog == nil:
		return errors.New("api: a catalog is required")
	case c.Gate == nil:
		return errors.New("api: an admission gate is required")
	case c.Temporal == nil:
		return errors.New("api: a Temporal client is required")
	case c.Reconciler == nil:
		return errors.New("api: a reconciler is required")
	}
	return nil
}

// Server is the HTTP API.
type Server struct {
	cfg Config
	mux *http.ServeMux
}

// New validates cfg and builds the server.
func New(cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Outbox == nil {
		relay, err := outbox.New(outbox.Config{Store: cfg.Store, Signaller: cfg.Temporal, TokenTTL: cfg.TokenTTL, Logger: cfg.Logger})
		if err != nil {
			return nil, err
		}
		cfg.Outbox = relay
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux()}
	s.routes()
	return s, nil
}

// Routes lists every route the server serves, as "METHOD /path"; the
// OpenAPI document is checked against it.
var Routes = []string{
	"GET /healthz",
	"GET /readyz",
	"GET /openapi.yaml",
	"GET /v1/tools",
	"POST /v1/invocations",
	"GET /v1/invocations/{id}",
	"GET /v1/approvals",
	"GET /v1/approvals/{id}",
	"POST /v1/approvals/{id}/approve",
	"POST /v1/approvals/{id}/reject",
	"POST /v1/approvals/{id}/modify",
	"GET /v1/audit",
	"POST /v1/catalog/reload",
	"GET /v1/catalog/versions",
	"GET /v1/canary",
	"POST /v1/canary/run",
	"GET /v1/metrics",
	"GET /v1/reconciliations",
	"GET /v1/reconciliations/{key}",
	"POST /v1/reconciliations/{key}/resolve",
	"POST /v1/reconciliations/{key}/check",
	"POST /v1/reconciliations/{key}/retry",
	"GET /v1/refusals",
	"GET /v1/sessions",
	"GET /v1/sessions/{id}",
	"POST /v1/sessions/{id}/rollback",
	"POST /v1/sessions/{id}/resolve",
	"PUT /v1/sessions/{id}/facts/{name}",
	"POST /v1/sessions/{id}/end",
	"POST /v1/webhooks/twilio/status",
	"POST /v1/platforms/vapi/{agent}",
	"POST /v1/platforms/elevenlabs/{agent}/tools/{tool}",
	"POST /v1/platforms/elevenlabs/{agent}/post-call",
	"POST /v1/platforms/retell/{agent}/functions",
	"POST /v1/platforms/retell/{agent}/webhook",
	"GET /v1/platforms/{platform}/agents/{agent}/tools",
	"POST /codec/{namespace}/decode",
	"OPTIONS /codec/{namespace}/decode",
	"POST /codec/{namespace}/encode",
	"OPTIONS /codec/{namespace}/encode",
	"POST /codec/decode",
	"OPTIONS /codec/decode",
	"POST /codec/encode",
	"OPTIONS /codec/encode",
}

func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.mux.HandleFunc("GET /readyz", s.handleReady)
	s.mux.HandleFunc("GET /openapi.yaml", handleOpenAPI)
	s.mux.HandleFunc("GET /v1/tools", s.agentOnly(s.handleTools))
	s.mux.HandleFunc("POST /v1/invocations", s.agentOnly(s.handleInvoke))
	s.mux.HandleFunc("GET /v1/invocations/{id}", s.agentOnly(s.handleGetInvocation))
	s.mux.HandleFunc("GET /v1/approvals", s.opsOnly(s.handleListApprovals))
	s.mux.HandleFunc("GET /v1/approvals/{id}", s.opsOnly(s.handleGetApproval))
	s.mux.HandleFunc("POST /v1/approvals/{id}/approve", s.opsOnly(s.handleDecide(ledger.DecisionApprove)))
	s.mux.HandleFunc("POST /v1/approvals/{id}/reject", s.opsOnly(s.handleDecide(ledger.DecisionReject)))
	s.mux.HandleFunc("POST /v1/approvals/{id}/modify", s.opsOnly(s.handleDecide(ledger.DecisionModify)))
	s.mux.HandleFunc("GET /v1/audit", s.opsOnly(s.handleAudit))
	s.mux.HandleFunc("POST /v1/catalog/reload", s.opsOnly(s.permitted(tools.PermReloadCatalog, s.handleCatalogReload)))
	s.mux.HandleFunc("GET /v1/catalog/versions", s.opsOnly(s.handleCatalogVersions))
	s.mux.HandleFunc("GET /v1/canary", s.opsOnly(s.handleCanary))
	s.mux.HandleFunc("POST /v1/canary/run", s.opsOnly(s.permitted(tools.PermRunCanary, s.handleCanaryRun)))
	s.mux.HandleFunc("GET /v1/metrics", s.opsOnly(handleMetrics))
	s.mux.HandleFunc("GET /v1/reconciliations", s.opsOnly(s.handleListReconciliations))
	s.mux.HandleFunc("GET /v1/reconciliations/{key}", s.opsOnly(s.handleGetReconciliation))
	s.mux.HandleFunc("POST /v1/reconciliations/{key}/resolve", s.opsOnly(s.permitted(tools.PermSettleReconciliations, s.handleResolveReconciliation)))
	s.mux.HandleFunc("POST /v1/reconciliations/{key}/check", s.opsOnly(s.handleCheckReconciliation))
	s.mux.HandleFunc("POST /v1/reconciliations/{key}/retry", s.opsOnly(s.handleRetryReconciliation))
	s.mux.HandleFunc("GET /v1/refusals", s.opsOnly(s.handleListRefusals))
	s.mux.HandleFunc("GET /v1/sessions", s.opsOnly(s.handleListSessions))
	s.mux.HandleFunc("GET /v1/sessions/{id}", s.agentOrOps(s.handleGetSession))
	s.mux.HandleFunc("POST /v1/sessions/{id}/rollback", s.agentOrOps(s.handleRollback))
	s.mux.HandleFunc("POST /v1/sessions/{id}/resolve", s.agentOrOps(s.handleResolve))
	s.mux.HandleFunc("PUT /v1/sessions/{id}/facts/{name}", s.agentOrOps(s.handleSetFact))
	s.mux.HandleFunc("POST /v1/sessions/{id}/end", s.agentOrOps(s.handleEnd))
	s.mux.HandleFunc("POST /v1/webhooks/twilio/status", s.handleTwilioStatus)
	s.platformRoutes()
	s.codecRoutes()
	s.mux.HandleFunc("/", s.handleNotFound)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// A handler bug must still answer with an observation, and must
		// not take the process down with it.
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.cfg.Logger.Error("handler panic", "panic", v, "path", r.URL.Path)
			writeRefusal(w, internalRefusal())
		}
	}()
	if limit := s.bodyLimit(r); r.ContentLength > limit {
		// No route takes a body this large: refuse before routing, so
		// even an unauthenticated sender reads why.
		s.refuseTooLarge(w, r, limit)
		return
	}
	emptyCodecNamespace(r)
	s.mux.ServeHTTP(w, r)
}
