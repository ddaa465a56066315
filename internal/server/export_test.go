package server

import (
	"context"

	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
)

// NewReadyCheck exposes /readyz's check to the package's external tests:
// check answers as /readyz does, drain marks the process stopping.
func NewReadyCheck(store ledger.Store, temporal client.Client) (check func(context.Context) apitype.Readiness, drain func()) {
	r := &readyCheck{store: store, temporal: temporal}
	return r.check, r.drain
}
