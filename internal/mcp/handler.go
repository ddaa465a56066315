package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/maestro-run/maestro/internal/inprocess"
	"github.com/maestro-run/maestro/internal/throttle"
	"github.com/maestro-run/maestro/tools"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// sessionIdle is how long an idle MCP session is kept: longer than any
// call a voice agent holds.
const sessionIdle = 2 * time.Hour

// maxBodyBytes caps an MCP request: one JSON-RPC message around arguments
// the API itself caps at 64 KiB.
const maxBodyBytes = 256 << 10

// Config holds the MCP endpoint's dependencies.
type Config struct {
	Catalog tools.Source
	// API is maestro's HTTP API; tool calls are served by it, in process.
	API http.Handler
	// PublicURL is the base URL clients reach maestro at. A request that
	// reached a loopback address is refused unless its Host is a loopback
	// name or PublicURL's host (DNS-rebinding protection that still lets a
	// reverse proxy on the same machine forward the public name).
	// Optional.
	PublicURL string
	// Logger. Optional: default slog.Default().
	Logger *slog.Logger
	// Withheld reports a tool agents are kept from for now (a red
	// canary): it is left out of the tool list until it is offered again.
	// Optional: default none withheld.
	Withheld func(*tools.Tool) bool
	// Throttle counts failed key checks per client address and refuses
	// an address that failed too often; share the API's, so an address
	// has one budget. Optional: default one of the endpoint's own with
	// throttle's default limits.
	Throttle *throttle.Throttle
	// AnswerTimeout is how long a message may take to be answered: a tool
	// call waits on its invocation as POST /v1/invocations does, so the
	// API's AnswerTimeout. Optional: default the server's write timeout.
	AnswerTimeout time.Duration
}

// Handler is the MCP endpoint.
type Handler struct {
	cfg        Config
	publicHost string
	servers    map[string]*sdk.Server // by agent ID
	withheld   withheldTools
	api        *http.Client
	next       http.Handler
	// streams is cancelled by CloseStreams, ending every standalone SSE
	// stream.
	streams      context.Context
	closeStreams context.CancelFunc
}

// New builds the MCP endpoint: one MCP server per agent of the catalog,
// behind bearer authentication with agent keys.
func New(cfg Config) (*Handler, error) {
	if cfg.Catalog == nil || cfg.API == nil {
		return nil, errors.New("mcp: a catalog and the API handler are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Throttle == nil {
		cfg.Throttle = throttle.New(throttle.Config{Logger: cfg.Logger})
	}
	h := &Handler{
		cfg:     cfg,
		servers: map[string]*sdk.Server{},
		api:     &http.Client{Transport: inprocess.Transport{Handler: cfg.API}},
	}
	h.streams, h.closeStreams = context.WithCancel(context.Background())
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil {
			return nil, fmt.Errorf("error parsing the public URL: %w", err)
		}
		h.publicHost = u.Hostname()
	}
	for _, agent := range cfg.Catalog.Load().Agents() {
		srv, err := h.newServer(agent)
		if err != nil {
			return nil, err
		}
		h.servers[agent.ID] = srv
	}
	streamable := sdk.NewStreamableHTTPHandler(h.serverFor, &sdk.StreamableHTTPOptions{
		// An MCP session holds nothing a call needs (that is all in the
		// ledger), but clients expect one: an answer may come from another
		// process only after the client re-initializes, as the spec has it
		// do when a session is unknown. Stateless mode would spare that,
		// but it sets no Mcp-Session-Id, which the conformance suite's SSE
		// scenarios fail; a load balancer routes on the header instead.
		SessionTimeout: sessionIdle,
		// One JSON answer per request: maestro sends no notifications.
		JSONResponse: true,
		// ServeHTTP checks the Host itself, allowing the public name.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        maxBodyBytes,
		Logger:                     cfg.Logger,
	})
	h.next = auth.RequireBearerToken(h.verify, &auth.RequireBearerTokenOptions{
		// Agent keys do not expire; the catalog revokes them.
		AllowMissingExpiration: true,
	})(streamable)
	return h, nil
}

// Route serves Path with mcp and everything else with api.
func Route(api http.Handler, mcp *Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Path {
			// Routed here rather than by a ServeMux, so the pattern is
			// recorded here for whatever names the request's route.
			r.Pattern = Path
			mcp.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hostAllowed(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	client := h.cfg.Throttle.Client(r)
	if wait := h.cfg.Throttle.Wait(client); wait > 0 {
		throttle.RetryAfter(w, wait)
		http.Error(w, fmt.Sprintf("Too many requests with a wrong key came from this address; this one was not checked. Try again in %d s.", throttle.Seconds(wait)), http.StatusTooManyRequests)
		return
	}
	token, presented := bearerToken(r.Header.Get("Authorization"))
	_, ok := h.cfg.Catalog.Load().AgentByKey(token)
	switch {
	case ok:
		h.cfg.Throttle.Succeeded(client)
	case presented:
		h.cfg.Throttle.Failed(client, "MCP agent key")
	}
	if !ok {
		// The SDK answers 401 without a challenge unless OAuth metadata is
		// configured; RFC 9110 wants one.
		w.Header().Set("WWW-Authenticate", `Bearer realm="maestro"`)
	}
	switch {
	case r.Method == http.MethodGet:
		h.serveStream(w, r)
		return
	case r.Method == http.MethodPost && h.cfg.AnswerTimeout > 0:
		// A tool call's in-process API request cannot reach this
		// connection's deadline, so it is set here for every message; a
		// writer that takes none keeps the server's write timeout.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(h.cfg.AnswerTimeout))
	}
	h.next.ServeHTTP(w, r)
}

// serveStream serves a GET, which opens a session's standalone SSE stream
// and holds it until the client leaves, or until CloseStreams.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request) {
	if h.streams.Err() != nil {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "maestro is shutting down: open the stream again, and another process will serve it.", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(h.streams, cancel)()
	h.next.ServeHTTP(w, r.WithContext(ctx))
}

// CloseStreams ends every standalone SSE stream now and refuses new ones.
// An HTTP server's Shutdown waits for each response to end, and a client
// (the TypeScript SDK's, by default) holds its stream open as long as it
// is connected, so the server calls this when it shuts down. Tool calls
// are POSTs answered in JSON: they finish as they would.
func (h *Handler) CloseStreams() { h.closeStreams() }

// bearerToken is the token an Authorization header carries, parsed as the
// SDK's middleware parses it, and whether there is one.
func bearerToken(authorization string) (string, bool) {
	f := strings.Fields(authorization)
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return "", false
	}
	return f[1], true
}

// keyExtra is where the verified key travels in a request's token info, so
// a tool call can present it to the API.
const keyExtra = "maestro_agent_key"

func (h *Handler) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	cat := h.cfg.Catalog.Load()
	agent, ok := cat.AgentByKey(token)
	if !ok {
		// An operator's key is told where it belongs; anything else is
		// simply invalid, as it is no key at all.
		if _, isOperator := cat.OperatorByKey(token); isOperator {
			return nil, fmt.Errorf("%w: an operator key; %s takes an agent key", auth.ErrInvalidToken, Path)
		}
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: agent.ID, Extra: map[string]any{keyExtra: token}}, nil
}

func (h *Handler) serverFor(r *http.Request) *sdk.Server {
	ti := auth.TokenInfoFromContext(r.Context())
	if ti == nil {
		return nil
	}
	srv := h.servers[ti.UserID]
	if srv != nil && h.cfg.Withheld != nil {
		h.offer(ti.UserID, srv)
	}
	return srv
}

// hostAllowed refuses a request that reached a loopback address under a
// name that is neither loopback nor maestro's public name: a web page
// whose DNS was rebound to 127.0.0.1.
func (h *Handler) hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopback(local.String()) {
		return true
	}
	host := hostname(r.Host)
	return loopback(r.Host) || (h.publicHost != "" && strings.EqualFold(host, h.publicHost))
}

func hostname(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.Trim(hostport, "[]")
}

func loopback(hostport string) bool {
	host := hostname(hostport)
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
