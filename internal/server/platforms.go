package server

import (
	"crypto/sha256"
	"errors"
	"fmt"
)

// platformSecrets reads each platform agent's secret from the environment
// variable its catalog block names. It refuses to start without one: a
// platform whose every request is refused is better named at start. It
// refuses two agents whose variables hold one secret too: the loader
// refuses them naming one variable, but only here are the values seen,
// and a request signed for one would be accepted at the other's URL.
func platformSecrets(cfg CoreConfig) (map[string][]byte, error) {
	secrets := make(map[string][]byte)
	// Keyed by a digest, so no secret is kept as a map key or printed.
	holder := map[[sha256.Size]byte]string{}
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
		sum := sha256.Sum256([]byte(secret))
		if other, ok := holder[sum]; ok {
			errs = append(errs, fmt.Errorf("agent %q: platform.secret_env: %s holds the same secret as agent %q's platform secret: agents %q and %q would accept each other's signed requests; give each agent its own secret",
				a.ID, a.Platform.SecretEnv, other, other, a.ID))
			continue
		}
		holder[sum] = a.ID
		secrets[a.ID] = []byte(secret)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("service: platform requests cannot be verified: %w", err)
	}
	return secrets, nil
}
