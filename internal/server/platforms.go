package server

import (
	"errors"
	"fmt"
)

// platformSecrets reads each platform agent's secret from the environment
// variable its catalog block names. It refuses to start without one: a
// platform whose every request is refused is better named at start.
func platformSecrets(cfg CoreConfig) (map[string][]byte, error) {
	secrets := make(map[string][]byte)
	var errs []error
	for _, a := range cfg.Catalog.Agents() {
		if a.Platform == nil {
			continue
		}
		secret := cfg.Getenv(a.Platform.SecretEnv)
		if secret == "" {
			errs = append(errs, fmt.Errorf("agent %q: platform.secret_env: environment variable %s is not set or empty", a.ID, a.Platform.SecretEnv))
			continue
		}
		secrets[a.ID] = []byte(secret)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("service: platform requests cannot be verified: %w", err)
	}
	return secrets, nil
}
