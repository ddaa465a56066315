//go:build chaos

package chaos

import "context"

// providerBurst stands in for the provider stand-ins' fault bursts until
// they are written: it injects nothing.
func (c *cluster) providerBurst(ctx context.Context, n int) (faultEvent, error) {
	return faultEvent{Kind: kindProviderBurst, Detail: "stub"}, nil
}
