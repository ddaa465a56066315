// Command worker runs maestro: the Temporal worker and the HTTP API. With
// --dev it also embeds Temporal, a SQLite ledger and provider stand-ins, so
// it needs no external services and no credentials.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/maestro-run/maestro/daemon"
	"github.com/maestro-run/maestro/transcriptref"
)

func main() {
	cfg := daemon.FromEnv()
	flag.BoolVar(&cfg.Dev, "dev", false, "run everything embedded (no external services, no credentials)")
	flag.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "API listen address (env MAESTRO_HTTP_ADDR; default 127.0.0.1:8080)")
	flag.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "base URL providers reach the API at, for Twilio's delivery callbacks (env MAESTRO_PUBLIC_URL; dev default: the API's own address)")
	flag.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "dev mode's data directory (env MAESTRO_DATA_DIR; default .data)")
	flag.StringVar(&cfg.CatalogPath, "catalog", cfg.CatalogPath, "catalog file (env MAESTRO_CATALOG; dev default: the demo catalog)")
	flag.StringVar(&cfg.TemporalAddress, "temporal", cfg.TemporalAddress, "Temporal frontend host:port (env TEMPORAL_ADDRESS; dev default: embedded)")
	transcriptHosts := flag.String("transcript-hosts", strings.Join(cfg.TranscriptHosts, ","),
		"comma-separated host[:port] list a transcript_ref may point at (env MAESTRO_TRANSCRIPT_HOSTS; default none: transcript_ref refused)")
	flag.DurationVar(&cfg.DependencyTimeout, "dependency-timeout", cfg.DependencyTimeout, "how long start-up waits, in all, for PostgreSQL and Temporal to answer (env MAESTRO_DEPENDENCY_TIMEOUT; default 2m)")
	flag.Parse()
	cfg.TranscriptHosts = transcriptref.ParseHosts(*transcriptHosts)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := daemon.Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "maestro:", err)
		os.Exit(1)
	}
}
