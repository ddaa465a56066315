package main

import (
	"flag"
	"strings"

	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/transcriptref"
)

// parseFlags reads the configuration from the environment, then lets the
// command line override it.
func parseFlags() server.Config {
	cfg := server.FromEnv()
	flag.BoolVar(&cfg.Dev, "dev", false, "run everything embedded (no external services, no credentials)")
	flag.StringVar((*string)(&cfg.Role), "role", string(cfg.Role), "parts this process runs: all, api or worker (env MAESTRO_ROLE; default all)")
	flag.DurationVar(&cfg.DrainTimeout, "drain-timeout", cfg.DrainTimeout, "on SIGTERM, how long work in flight may take to finish (env MAESTRO_DRAIN_TIMEOUT; default 30s, or the catalog's longest platform budget plus 5s if longer)")
	flag.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "API listen address (env MAESTRO_HTTP_ADDR; default 127.0.0.1:8080)")
	flag.DurationVar(&cfg.WriteTimeout, "http-write-timeout", cfg.WriteTimeout,
		"how long answering a request may take, but for calls that wait on their own budget (platform tool calls, invocations, MCP tool calls) (env MAESTRO_HTTP_WRITE_TIMEOUT; default 1m45s)")
	flag.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "base URL providers reach the API at, for Twilio's delivery callbacks (env MAESTRO_PUBLIC_URL; dev default: the API's own address)")
	flag.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "dev mode's data directory (env MAESTRO_DATA_DIR; default .data)")
	flag.StringVar(&cfg.CatalogPath, "catalog", cfg.CatalogPath, "catalog file (env MAESTRO_CATALOG; dev default: the demo catalog)")
	flag.StringVar(&cfg.TemporalAddress, "temporal", cfg.TemporalAddress, "Temporal frontend host:port (env TEMPORAL_ADDRESS; dev default: embedded)")
	flag.IntVar(&cfg.TemporalPort, "temporal-port", cfg.TemporalPort, "dev mode's embedded Temporal frontend port; it uses the next three too (default 7233)")
	transcriptHosts := flag.String("transcript-hosts", strings.Join(cfg.TranscriptHosts, ","),
		"comma-separated host[:port] list a transcript_ref may point at (env MAESTRO_TRANSCRIPT_HOSTS; default none: transcript_ref refused)")
	flag.DurationVar(&cfg.DependencyTimeout, "dependency-timeout", cfg.DependencyTimeout, "how long start-up waits, in all, for PostgreSQL and Temporal to answer (env MAESTRO_DEPENDENCY_TIMEOUT; default 2m)")
	flag.StringVar(&cfg.Telemetry.TracesEndpoint, "otlp-traces-endpoint", cfg.Telemetry.TracesEndpoint,
		"OTLP/HTTP URL traces are sent to, e.g. http://collector:4318/v1/traces (env OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT plus /v1/traces; default none: tracing off). Every process serves Prometheus metrics on GET /metrics")
	flag.Parse()
	cfg.TranscriptHosts = transcriptref.ParseHosts(*transcriptHosts)
	return cfg
}
