package apiclient

import (
	"context"
	"net/http"

	"github.com/maestro-run/maestro/apitype"
)

// Canary returns each canary tool's last result (operator key).
func (c *Client) Canary(ctx context.Context) (apitype.CanaryStatus, error) {
	var out apitype.CanaryStatus
	_, _, err := c.do(ctx, http.MethodGet, "/v1/canary", nil, &out)
	return out, err
}

// CanaryRun runs the canary now and returns once it has finished, with
// the run's ID and every canary tool's state after it (operator key).
func (c *Client) CanaryRun(ctx context.Context) (apitype.CanaryStatus, error) {
	var out apitype.CanaryStatus
	_, _, err := c.do(ctx, http.MethodPost, "/v1/canary/run", nil, &out)
	return out, err
}
