package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/maestro-run/maestro/internal/devtemporal"
)

// temporalCommand names the subcommand that runs a Temporal server on
// PostgreSQL instead of maestro, for rehearsing production on one machine.
const temporalCommand = "temporal"

// runTemporal serves Temporal, its state in PostgreSQL, until interrupted.
// It prints one "ready HOST:PORT" line on stdout once the frontend answers,
// which scripts and test harnesses wait for.
func runTemporal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(temporalCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	pg := devtemporal.Postgres{}
	cfg := devtemporal.Config{}
	fs.StringVar(&pg.URL, "database-url", os.Getenv("TEMPORAL_DATABASE_URL"), "PostgreSQL server to keep Temporal's state in; its database is used to create the two below (env TEMPORAL_DATABASE_URL; required)")
	fs.StringVar(&pg.Database, "database", "temporal", "database for history, executions and namespaces; created if missing")
	fs.StringVar(&pg.VisibilityDatabase, "visibility-database", "temporal_visibility", "database for visibility; created if missing")
	fs.IntVar(&pg.Shards, "shards", 4, "history shards; fixed when the databases are created")
	fs.StringVar(&cfg.Host, "host", "127.0.0.1", "IP address the frontend binds to; the other services stay on loopback")
	fs.IntVar(&cfg.Port, "port", 7233, "frontend gRPC port; history, matching and worker use the next three")
	fs.StringVar(&cfg.Namespace, "namespace", "default", "namespace registered on start")
	verbose := fs.Bool("v", false, "log the server's warnings and errors on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if pg.URL == "" {
		return errors.New("--database-url (or TEMPORAL_DATABASE_URL) is required")
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg.Postgres = &pg

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := devtemporal.Start(ctx, cfg)
	if err != nil {
		return fmt.Errorf("error starting Temporal: %w", err)
	}
	fmt.Fprintf(stdout, "ready %s\n", srv.HostPort())
	<-ctx.Done()
	return srv.Stop()
}
