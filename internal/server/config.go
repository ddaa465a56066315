// Package server runs a maestro process from its configuration: embedded
// dev mode (Temporal, SQLite ledger and provider stand-ins in-process) or
// production mode (a Temporal cluster, PostgreSQL and real providers), in
// the role the process was given, assembled from the registry mirror, the
// Temporal worker and the HTTP API.
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/maestro-run/maestro/internal/codec"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/telemetry"
	"github.com/maestro-run/maestro/internal/throttle"
	"github.com/maestro-run/maestro/internal/transcriptref"
)

// Config is a maestro process's configuration.
type Config struct {
	// CanaryEvery is how often the reality canary runs
	// (MAESTRO_CANARY_INTERVAL, e.g. 24h; 0 or off turns the schedule
	// off). Optional: default 24h.
	CanaryEvery time.Duration
	// CanarySESStoreURL is a store of sent mail the canary reads its
	// emails back from (MAESTRO_CANARY_SES_STORE_URL): SES itself has no
	// read API. Optional: in dev mode the SES stand-in's; otherwise an
	// email canary fails to read back.
	CanarySESStoreURL string
	// Dev runs everything embedded: Temporal with SQLite persistence, the
	// provider stand-ins, and a SQLite ledger unless DatabaseURL is set.
	// It runs in role all.
	Dev bool
	// Role is which parts this process runs (MAESTRO_ROLE): see Role.
	// Optional: default RoleAll.
	Role Role
	// DrainTimeout is how long a stopping process lets requests and
	// activities in flight finish before it cancels them
	// (MAESTRO_DRAIN_TIMEOUT). A provider call cancelled mid-flight has
	// an unknown outcome and goes to reconciliation, so it should outlast
	// the slowest provider call; a process that serves the API refuses a
	// catalog whose platform budget, plus tools.TimeoutMargin, outlasts
	// it. Optional: default 30s, or the catalog's longest platform budget
	// plus that margin if longer.
	DrainTimeout time.Duration
	// HTTPAddr is the API's listen address. Optional: default "127.0.0.1:8080".
	HTTPAddr string
	// PublicURL is the base URL providers reach the API at
	// (https://maestro.example.com): Twilio is asked to post each message's
	// delivery statuses to it, and signs them over it. Optional: in dev mode
	// default the API's own address; otherwise, without it, maestro does
	// not follow delivery and a message's outcome ends at "accepted".
	PublicURL string
	// DataDir holds dev mode's SQLite files and codec key, created 0700
	// (files 0600) whatever the umask. Optional: default ".data".
	DataDir string
	// DatabaseURL is the PostgreSQL ledger. Required outside dev mode. It
	// logs in as the schema's owner, which runs the migrations; the
	// service then works as DatabaseServiceRole.
	DatabaseURL string
	// DatabaseServiceRole is the PostgreSQL role the service runs as after
	// migrating (MAESTRO_DATABASE_SERVICE_ROLE): full DML on the ledger,
	// but only INSERT and SELECT on approval_events. It is created if
	// missing, which needs CREATEROLE. Optional: default
	// ledger.DefaultServiceRole.
	DatabaseServiceRole string
	// TemporalAddress is the Temporal frontend. Required outside dev mode;
	// in dev mode, set it to use an external server instead of the
	// embedded one.
	TemporalAddress string
	// TemporalPort is the embedded server's frontend port in dev mode; it
	// uses this port and the next three. Optional: default 7233.
	TemporalPort int
	// TemporalAuth secures the connection to TemporalAddress: TLS, mutual
	// TLS or an API key. Optional: default plain TCP.
	TemporalAuth TemporalAuth
	// Namespace is the Temporal namespace. Optional: default "default".
	Namespace string
	// TaskQueue is the Temporal task queue maestro's worker polls.
	// Optional: default workflows.TaskQueue. Processes sharing a namespace
	// but not a ledger must each have their own.
	TaskQueue string
	// CatalogPath is the catalog file. Optional in dev mode: default the
	// embedded demo catalog.
	CatalogPath string
	// Reload delivers a request to re-read the catalog file (cmd/worker
	// sends SIGHUP's): see Core.ReloadCatalog. Optional: default none.
	Reload <-chan os.Signal
	// CatalogPoll: see CoreConfig. Optional.
	CatalogPoll time.Duration
	// Providers configures the real connectors (ignored in dev mode, which
	// points them at the stand-ins).
	Providers Providers
	// WaitTimeout: how long the API waits for a result before a 202.
	// Optional: default 15s.
	WaitTimeout time.Duration
	// WriteTimeout bounds answering a request that waits on no budget of
	// its own (MAESTRO_HTTP_WRITE_TIMEOUT); a platform tool call, POST
	// /v1/invocations and an MCP tool call are each given their own
	// budget plus a margin instead. Optional: see HTTPTimeouts.Write.
	WriteTimeout time.Duration
	// TokenTTL is the lifetime of an approval's single-use token.
	// Optional: default 300s.
	TokenTTL time.Duration
	// RollbackWait bounds how long a rollback waits for the session's
	// calls in flight (MAESTRO_ROLLBACK_WAIT). Optional: default 30s.
	RollbackWait time.Duration
	// TranscriptHosts are the host[:port] entries a transcript_ref may
	// point at (MAESTRO_TRANSCRIPT_HOSTS, comma-separated). Outside dev
	// mode only https is fetched. Optional: empty refuses every
	// transcript_ref, so transcripts must be sent inline.
	TranscriptHosts []string
	// TranscriptMaxBytes caps a fetched transcript
	// (MAESTRO_TRANSCRIPT_MAX_BYTES). Optional: default 1 MiB; at most
	// transcriptref.MaxMaxBytes, below Temporal's payload limit.
	TranscriptMaxBytes int64
	// Codec says where the keys that encrypt every Temporal payload are
	// (MAESTRO_CODEC_KEYS, MAESTRO_CODEC_KEY_DIR, MAESTRO_CODEC_ACTIVE_KEY).
	// Required outside dev mode; in dev mode, default a key drawn on first
	// start and kept in DataDir.
	Codec codec.Config
	// CodecOrigin is the Temporal UI's origin, the one browser origin that
	// may call the codec endpoint (MAESTRO_CODEC_CORS_ORIGIN). Optional:
	// default none.
	CodecOrigin string
	// TrustedProxies are the reverse proxies in front of maestro whose
	// X-Forwarded-For names the client that failed key checks are counted
	// against (MAESTRO_TRUSTED_PROXIES: comma-separated addresses and CIDR
	// prefixes). Optional: default none, so the client is the connection's
	// peer and X-Forwarded-For is ignored; behind a proxy that is not
	// listed, every client shares the proxy's budget.
	TrustedProxies []netip.Prefix
	// DependencyTimeout is how long start-up waits, in all, for PostgreSQL
	// and Temporal to answer: in compose or Kubernetes they often come up
	// after maestro. Optional: default 2m.
	DependencyTimeout time.Duration
	// Telemetry configures traces (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
	// OTEL_EXPORTER_OTLP_ENDPOINT); metrics are always served on
	// /metrics. Optional: default traces off.
	Telemetry telemetry.Config
	// Logger. Optional: default a text logger on stderr.
	Logger *slog.Logger

	// envErrs are settings FromEnv could not read, reported by validate.
	envErrs []error
}

// Providers holds the production connector settings.
type Providers struct {
	Twilio connectors.TwilioConfig
	SES    connectors.SESConfig
	HTTP   map[string]connectors.HTTPService
}

// WithDefaults returns c with optional fields filled in.
func (c Config) WithDefaults() Config {
	if c.Role == "" {
		c.Role = RoleAll
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = "127.0.0.1:8080"
	}
	if c.DataDir == "" {
		c.DataDir = ".data"
	}
	if c.TemporalPort == 0 {
		c.TemporalPort = 7233
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.DatabaseServiceRole == "" {
		c.DatabaseServiceRole = ledger.DefaultServiceRole
	}
	if c.DependencyTimeout == 0 {
		c.DependencyTimeout = 2 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if err := c.Role.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.DrainTimeout < 0 {
		errs = append(errs, errors.New("--drain-timeout (MAESTRO_DRAIN_TIMEOUT) must be a positive duration such as 30s"))
	}
	errs = append(errs, c.envErrs...)
	if err := c.TemporalAuth.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.TemporalAuth.enabled() && c.TemporalAddress == "" {
		errs = append(errs, errors.New("TEMPORAL_TLS* and TEMPORAL_API_KEY secure the connection to TEMPORAL_ADDRESS, which is not set"))
	}
	if c.WriteTimeout < 0 {
		errs = append(errs, errors.New("--http-write-timeout (MAESTRO_HTTP_WRITE_TIMEOUT) must be a positive duration such as 2m"))
	}
	if c.TokenTTL < 0 {
		errs = append(errs, errors.New("MAESTRO_APPROVAL_TOKEN_TTL must be a positive duration such as 300s"))
	}
	if c.RollbackWait < 0 {
		errs = append(errs, errors.New("MAESTRO_ROLLBACK_WAIT must be a positive duration such as 30s"))
	}
	if c.DependencyTimeout < 0 {
		errs = append(errs, errors.New("--dependency-timeout (MAESTRO_DEPENDENCY_TIMEOUT) must be a positive duration such as 2m"))
	}
	if c.DatabaseURL != "" {
		if _, err := pgx.ParseConfig(c.DatabaseURL); err != nil {
			errs = append(errs, fmt.Errorf("DATABASE_URL is not a PostgreSQL connection string such as postgres://user@host:5432/db: %w", err))
		}
	}
	if c.PublicURL != "" {
		if err := validPublicURL(c.PublicURL); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.transcripts().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("MAESTRO_TRANSCRIPT_HOSTS / MAESTRO_TRANSCRIPT_MAX_BYTES: %w", err))
	}
	if c.CodecOrigin != "" {
		if err := validOrigin(c.CodecOrigin); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Dev {
		// Dev mode embeds one Temporal and one set of stand-ins per
		// process: there is nothing another process could share.
		if c.Role != RoleAll {
			errs = append(errs, fmt.Errorf("--dev runs every part in one process: drop --role %s (MAESTRO_ROLE) or --dev", c.Role))
		}
		return errors.Join(errs...)
	}
	if c.Codec.Empty() {
		errs = append(errs, errors.New("MAESTRO_CODEC_KEYS or MAESTRO_CODEC_KEY_DIR is required outside dev mode (or pass --dev): every workflow payload is encrypted"))
	}
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("DATABASE_URL is required outside dev mode (or pass --dev)"))
	}
	if c.TemporalAddress == "" {
		errs = append(errs, errors.New("TEMPORAL_ADDRESS is required outside dev mode (or pass --dev)"))
	}
	if c.CatalogPath == "" {
		errs = append(errs, errors.New("MAESTRO_CATALOG is required outside dev mode (or pass --dev)"))
	}
	return errors.Join(errs...)
}

// transcripts is the transcript_ref fetch policy; dev mode's transcript
// servers are local and plain http.
func (c Config) transcripts() transcriptref.Policy {
	return transcriptref.Policy{Hosts: c.TranscriptHosts, AllowHTTP: c.Dev, MaxBytes: c.TranscriptMaxBytes}
}

// usesDataDir reports whether dev mode keeps anything in DataDir: its
// SQLite ledger, its embedded Temporal's files or its own codec key.
func (c Config) usesDataDir() bool {
	return c.Dev && (c.DatabaseURL == "" || c.TemporalAddress == "" || c.Codec.Empty())
}

func (c Config) ledgerPath() string { return filepath.Join(c.DataDir, "ledger.db") }

func (c Config) temporalDir() string { return filepath.Join(c.DataDir, "temporal") }

// devCodecDir holds dev mode's own codec key, beside the histories it
// encrypts.
func (c Config) devCodecDir() string { return filepath.Join(c.DataDir, "codec") }

// FromEnv fills a Config from the environment; flags override it.
func FromEnv() Config {
	c := Config{
		HTTPAddr:            os.Getenv("MAESTRO_HTTP_ADDR"),
		PublicURL:           os.Getenv("MAESTRO_PUBLIC_URL"),
		DataDir:             os.Getenv("MAESTRO_DATA_DIR"),
		DatabaseURL:         os.Getenv("DATABASE_URL"),
		DatabaseServiceRole: os.Getenv("MAESTRO_DATABASE_SERVICE_ROLE"),
		Role:                Role(os.Getenv("MAESTRO_ROLE")),
		DrainTimeout:        durationEnv("MAESTRO_DRAIN_TIMEOUT"),
		WriteTimeout:        durationEnv("MAESTRO_HTTP_WRITE_TIMEOUT"),
		TemporalAddress:     os.Getenv("TEMPORAL_ADDRESS"),
		TemporalAuth: TemporalAuth{
			CAFile:     os.Getenv("TEMPORAL_TLS_CA_PATH"),
			CertFile:   os.Getenv("TEMPORAL_TLS_CERT_PATH"),
			KeyFile:    os.Getenv("TEMPORAL_TLS_KEY_PATH"),
			ServerName: os.Getenv("TEMPORAL_TLS_SERVER_NAME"),
			APIKey:     os.Getenv("TEMPORAL_API_KEY"),
		},
		Namespace:          os.Getenv("TEMPORAL_NAMESPACE"),
		TaskQueue:          os.Getenv("MAESTRO_TASK_QUEUE"),
		CatalogPath:        os.Getenv("MAESTRO_CATALOG"),
		TokenTTL:           durationEnv("MAESTRO_APPROVAL_TOKEN_TTL"),
		RollbackWait:       durationEnv("MAESTRO_ROLLBACK_WAIT"),
		TranscriptHosts:    transcriptref.ParseHosts(os.Getenv("MAESTRO_TRANSCRIPT_HOSTS")),
		TranscriptMaxBytes: bytesEnv("MAESTRO_TRANSCRIPT_MAX_BYTES"),

		Codec: codec.Config{
			Keys:      os.Getenv("MAESTRO_CODEC_KEYS"),
			KeyDir:    os.Getenv("MAESTRO_CODEC_KEY_DIR"),
			ActiveKey: os.Getenv("MAESTRO_CODEC_ACTIVE_KEY"),
		},
		CodecOrigin: os.Getenv("MAESTRO_CODEC_CORS_ORIGIN"),

		CanarySESStoreURL: os.Getenv("MAESTRO_CANARY_SES_STORE_URL"),

		DependencyTimeout: durationEnv("MAESTRO_DEPENDENCY_TIMEOUT"),
		Providers: Providers{
			Twilio: connectors.TwilioConfig{
				BaseURL:    os.Getenv("TWILIO_BASE_URL"),
				AccountSID: os.Getenv("TWILIO_ACCOUNT_SID"),
				AuthToken:  os.Getenv("TWILIO_AUTH_TOKEN"),
				From:       os.Getenv("TWILIO_FROM"),
			},
			SES: connectors.SESConfig{
				Endpoint:        os.Getenv("SES_ENDPOINT"),
				Region:          os.Getenv("SES_REGION"),
				AccessKeyID:     os.Getenv("AWS_ACCESS_KEY_ID"),
				SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
				SessionToken:    os.Getenv("AWS_SESSION_TOKEN"),
				From:            os.Getenv("SES_FROM"),
			},
			HTTP: httpServicesFromEnv(),
		},
	}
	switch v := os.Getenv("MAESTRO_CANARY_INTERVAL"); v {
	case "":
	case "0", "off":
		c.CanaryEvery = -1
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			c.envErrs = append(c.envErrs, fmt.Errorf("MAESTRO_CANARY_INTERVAL must be a positive duration such as 24h, or 0 or off, got %q", v))
		}
		c.CanaryEvery = d
	}
	c.Telemetry = telemetry.FromEnv(os.Getenv)
	proxies, err := throttle.ParseTrustedProxies(os.Getenv("MAESTRO_TRUSTED_PROXIES"))
	if err != nil {
		c.envErrs = append(c.envErrs, fmt.Errorf("MAESTRO_TRUSTED_PROXIES: %w", err))
	}
	c.TrustedProxies = proxies
	if v := os.Getenv("TEMPORAL_TLS"); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			c.envErrs = append(c.envErrs, fmt.Errorf("TEMPORAL_TLS must be true or false, got %q", v))
		}
		c.TemporalAuth.TLS = on
	}
	return c
}

// httpServicesFromEnv reads MAESTRO_HTTP_SERVICE_<NAME>_URL and
// MAESTRO_HTTP_SERVICE_<NAME>_TOKEN pairs.
func httpServicesFromEnv() map[string]connectors.HTTPService {
	out := map[string]connectors.HTTPService{}
	const prefix = "MAESTRO_HTTP_SERVICE_"
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, prefix) || !strings.HasSuffix(k, "_URL") {
			continue
		}
		name := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(k, prefix), "_URL"))
		out[name] = connectors.HTTPService{BaseURL: v, Token: os.Getenv(prefix + strings.ToUpper(name) + "_TOKEN")}
	}
	return out
}

// durationEnv reads a duration such as "300s"; an unparsable value is
// reported by validate rather than silently ignored.
func durationEnv(name string) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return -1
	}
	return d
}

// validPublicURL accepts an absolute http(s) URL with a host and nothing
// after its path: Twilio signs the callback URL exactly as given, so a
// query or fragment would only make signatures harder to check.
func validPublicURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("MAESTRO_PUBLIC_URL must be an http(s) base URL such as https://maestro.example.com, got %q", raw)
	}
	return nil
}

// validOrigin accepts a browser origin: scheme and host, nothing after,
// since the browser sends exactly that and compares it whole.
func validOrigin(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.HasSuffix(raw, "/") {
		return fmt.Errorf("MAESTRO_CODEC_CORS_ORIGIN must be an origin such as https://temporal.example.com (no path), got %q", raw)
	}
	return nil
}

// bytesEnv reads a byte count; an unparsable value is reported by validate
// rather than silently ignored.
func bytesEnv(name string) int64 {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return -1
	}
	return n
}
