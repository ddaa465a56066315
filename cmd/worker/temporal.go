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

// temporalCommand names the subcommand that runs a Temporal server on its
// own instead of maestro: on PostgreSQL, for rehearsing production on one
// machine, or on SQLite, for tests that keep the server out of their
// process.
const temporalCommand = "temporal"

// runTemporal serves Temporal until interrupted. It prints one
// "ready HOST:PORT" line on stdout once the frontend answers, which
// scripts and test harnesses wait for.
func runTemporal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(temporalCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	pg := devtemporal.Postgres{}
	cfg := devtemporal.Config{}
	fs.StringVar(&pg.URL, "database-url", os.Getenv("TEMPORAL_DATABASE_URL"), "PostgreSQL server to keep Temporal's state in; its database is used to create the two below (env TEMPORAL_DATABASE_URL; required unless --data-dir)")
	fs.StringVar(&pg.Database, "database", "temporal", "database for history, executions and namespaces; created if missing")
	fs.StringVar(&pg.VisibilityDatabase, "visibility-database", "temporal_visibility", "database for visibility; created if missing")
	fs.IntVar(&pg.Shards, "shards", 4, "history shards; fixed when the databases are created")
	fs.StringVar(&cfg.DataDir, "data-dir", "", "keep Temporal's state in SQLite files in this directory instead of PostgreSQL, with one history shard")
	fs.StringVar(&cfg.Host, "host", "127.0.0.1", "IP address the frontend binds to; the other services stay on loopback")
	fs.IntVar(&cfg.Port, "port", 7233, "frontend gRPC port; history, matching and worker use the next three; 0 picks free ones")
	fs.StringVar(&cfg.Namespace, "namespace", "default", "namespace registered on start")
	verbose := fs.Bool("v", false, "log the server's warnings and errors on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	switch {
	case cfg.DataDir != "" && flagSet(fs, "database-url"):
		return errors.New("--data-dir and --database-url are exclusive: Temporal's state is in SQLite or in PostgreSQL")
	case cfg.DataDir == "" && pg.URL == "":
		return errors.New("--database-url (or TEMPORAL_DATABASE_URL) or --data-dir is required")
	case cfg.DataDir == "":
		cfg.Postgres = &pg
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := devtemporal.Start
	if cfg.Port == 0 {
		start = devtemporal.StartOnFreePort
	}
	srv, err := start(ctx, cfg)
	if err != nil {
		return fmt.Errorf("error starting Temporal: %w", err)
	}
	fmt.Fprintf(stdout, "ready %s\n", srv.HostPort())
	<-ctx.Done()
	return srv.Stop()
}

// flagSet reports whether the command line set the flag named name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
