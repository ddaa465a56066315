// Command worker runs maestro: the Temporal worker and the HTTP API, or one
// of them (--role). With --dev it also embeds Temporal, a SQLite ledger and
// provider stand-ins, so it needs no external services and no credentials.
// "worker temporal" instead runs a Temporal server on its own, on
// PostgreSQL to rehearse production on one machine, or on SQLite.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/maestro-run/maestro/internal/server"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == temporalCommand {
		if err := runTemporal(context.Background(), os.Args[2:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "maestro temporal:", err)
			os.Exit(1)
		}
		return
	}
	cfg := parseFlags()

	// SIGHUP re-reads the catalog file: see the README's "Catalog reload".
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	cfg.Reload = hup

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // while draining, a second signal stops at once
	if err := server.Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "maestro:", err)
		os.Exit(1)
	}
}
