package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/internal/devtemporal"
)

// temporalOnPostgres is a Temporal server the bench runs itself on
// PostgreSQL: dev mode's server config only embeds the SQLite one, but it
// takes any server's address, so maestro still runs in dev mode (its
// ledger, stand-ins and codec) against a store laid out as in production.
type temporalOnPostgres struct {
	server *devtemporal.Server
	pg     devtemporal.Postgres
}

// startTemporalOnPostgres starts a server in two fresh databases on the
// PostgreSQL server at url, named for this run so runs never share one.
func startTemporalOnPostgres(ctx context.Context, url string, shards int, runID string) (*temporalOnPostgres, error) {
	t := &temporalOnPostgres{pg: devtemporal.Postgres{
		URL:                url,
		Database:           "maestro_bench_" + runID,
		VisibilityDatabase: "maestro_bench_visibility_" + runID,
		Shards:             shards,
	}}
	port, err := devtemporal.FindFreePort()
	if err != nil {
		return nil, fmt.Errorf("error finding ports for Temporal: %w", err)
	}
	t.server, err = devtemporal.Start(ctx, devtemporal.Config{Postgres: &t.pg, Port: port})
	if err != nil {
		// Start may have created the databases before failing.
		return nil, errors.Join(fmt.Errorf("error starting Temporal on PostgreSQL: %w", err), t.drop())
	}
	return t, nil
}

// stop stops the server, then drops its databases.
func (t *temporalOnPostgres) stop() error {
	return errors.Join(t.server.Stop(), t.drop())
}

func (t *temporalOnPostgres) drop() error {
	// The run's context may be cancelled by now; the databases must go.
	if err := devtemporal.DropPostgres(context.Background(), t.pg); err != nil {
		return fmt.Errorf("error dropping Temporal's databases: %w", err)
	}
	return nil
}
