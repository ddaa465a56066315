package server

import (
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/internal/callback"
)

// newCallbackRelay builds the relay that posts final observations to the
// agents' callback URLs. It refuses to start on a callback that could not
// be sent safely: plain http outside dev mode, or a secret missing from the
// environment. Naming the agent and field there beats a callback that
// fails at every attempt after the agent was told to wait for it.
func newCallbackRelay(cfg CoreConfig) (*callback.Relay, error) {
	secrets, vapi := make(map[string][]byte), make(map[string]bool)
	var errs []error
	for _, a := range cfg.Catalog.Agents() {
		if a.Platform != nil && a.Platform.PushResults {
			vapi[a.ID] = true
		}
		cb := a.Callback
		if cb == nil {
			continue
		}
		if cb.URL.Scheme != "https" && !cfg.LoopbackCallbacks {
			errs = append(errs, fmt.Errorf("agent %q: callback_url: plain http %q is allowed only in dev mode; use https", a.ID, cb.URL))
		}
		secret := cfg.Getenv(cb.SecretEnv)
		if secret == "" {
			errs = append(errs, fmt.Errorf("agent %q: callback_secret_env: environment variable %s is not set or empty", a.ID, cb.SecretEnv))
		}
		secrets[a.ID] = []byte(secret)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("service: agent callbacks cannot be sent: %w", err)
	}
	rc := cfg.Callbacks
	rc.Store, rc.Secrets, rc.VapiPush = cfg.Store, secrets, vapi
	if rc.Logger == nil {
		rc.Logger = cfg.Logger
	}
	return callback.New(rc)
}
