package apiclient

import (
	"context"
	"net/http"
	"net/url"

	"github.com/maestro-run/maestro/apitype"
)

// Reconciliations lists the first page of the reconciliation queue (see
// ReconciliationPage). It needs an operator key.
func (c *Client) Reconciliations(ctx context.Context) (apitype.ReconciliationList, error) {
	return c.ReconciliationPage(ctx, apitype.ListQuery{})
}

// Reconciliation reads one effect's reconciliation state and its log.
func (c *Client) Reconciliation(ctx context.Context, operationKey string) (apitype.Reconciliation, error) {
	var out apitype.Reconciliation
	_, _, err := c.do(ctx, http.MethodGet, reconciliationPath(operationKey), nil, &out)
	return out, err
}

// ResolveReconciliation records the key's operator's decision on a held
// effect: outcome is apitype.OutcomeDelivered or OutcomeNotDelivered, and
// reason says what was checked.
func (c *Client) ResolveReconciliation(ctx context.Context, operationKey, outcome, reason string) (apitype.Reconciliation, error) {
	var out apitype.Reconciliation
	body := apitype.ReconciliationDecision{Outcome: outcome, Reason: reason}
	_, _, err := c.do(ctx, http.MethodPost, reconciliationPath(operationKey)+"/resolve", body, &out)
	return out, err
}

// CheckReconciliation asks maestro to search the provider's records again
// for a held effect. Nothing is sent.
func (c *Client) CheckReconciliation(ctx context.Context, operationKey string) (apitype.Reconciliation, error) {
	var out apitype.Reconciliation
	_, _, err := c.do(ctx, http.MethodPost, reconciliationPath(operationKey)+"/check", nil, &out)
	return out, err
}

// RetryReconciliation delivers held post-call work (a key ending in
// "/held") again along its whole chain.
func (c *Client) RetryReconciliation(ctx context.Context, key string) (apitype.Reconciliation, error) {
	var out apitype.Reconciliation
	_, _, err := c.do(ctx, http.MethodPost, reconciliationPath(key)+"/retry", nil, &out)
	return out, err
}

// reconciliationPath escapes the key as one path segment: operation keys
// may contain slashes.
func reconciliationPath(operationKey string) string {
	return "/v1/reconciliations/" + url.PathEscape(operationKey)
}

// Metrics reads the counters an operator alerts on.
func (c *Client) Metrics(ctx context.Context) (apitype.Metrics, error) {
	var out apitype.Metrics
	_, _, err := c.do(ctx, http.MethodGet, "/v1/metrics", nil, &out)
	return out, err
}
