package server

import (
	"context"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
)

// readyCheckTimeout bounds each dependency check of a /readyz request:
// an orchestrator's probe gives up after a few seconds, and a dependency
// that slow is as good as down for new work.
const readyCheckTimeout = 2 * time.Second

// readyCheck answers /readyz once a process has started: ready while
// PostgreSQL and Temporal answer and it is not draining. /healthz, which
// says only that the process is up, never consults it, so a dependency's
// outage takes processes out of rotation without having them restarted.
type readyCheck struct {
	store    ledger.Store
	temporal client.Client
	draining atomic.Bool
	// catalog is the version served and any drift from the ledger's
	// current one: reported, not a reason to leave rotation, since the
	// catalog served is a valid one.
	catalog func() (version, drift string)
}

// drain makes every later check answer "draining".
func (r *readyCheck) drain() { r.draining.Store(true) }

func (r *readyCheck) check(ctx context.Context) apitype.Readiness {
	if r.draining.Load() {
		return apitype.Readiness{Status: apitype.ReadinessDraining}
	}
	ctx, cancel := context.WithTimeout(ctx, readyCheckTimeout)
	defer cancel()
	if err := r.store.Ping(ctx); err != nil {
		return apitype.Readiness{Status: apitype.ReadinessUnavailable, WaitingFor: dependencyPostgres, Detail: err.Error()}
	}
	if _, err := r.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return apitype.Readiness{Status: apitype.ReadinessUnavailable, WaitingFor: dependencyTemporal, Detail: err.Error()}
	}
	ready := apitype.Readiness{Status: apitype.ReadinessReady}
	if r.catalog != nil {
		ready.Catalog, ready.CatalogDrift = r.catalog()
	}
	return ready
}
