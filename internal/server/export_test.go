package server

import (
	"context"

	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/tools"
)

// NewReadyCheck exposes /readyz's check to the package's external tests:
// check answers as /readyz does, drain marks the process stopping.
func NewReadyCheck(store ledger.Store, temporal client.Client) (check func(context.Context) apitype.Readiness, drain func()) {
	r := &readyCheck{store: store, temporal: temporal}
	return r.check, r.drain
}

// CheckNotifyWebhooks exposes the start check of the catalog's webhook
// notification channels, as run outside dev mode.
func CheckNotifyWebhooks(cat *tools.Catalog, getenv func(string) string) error {
	return checkNotifyWebhooks(CoreConfig{Catalog: cat, Getenv: getenv})
}

// PlatformSecrets exposes the start's reading of the platform agents'
// secrets.
func PlatformSecrets(cat *tools.Catalog, getenv func(string) string) (map[string][]byte, error) {
	return platformSecrets(CoreConfig{Catalog: cat, Getenv: getenv})
}
