package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/maestro-run/maestro/apitype"
)

// listPath is a listing's path with q as its query string.
func listPath(path string, q apitype.ListQuery) string {
	v := url.Values{}
	for name, val := range map[string]string{
		"status": q.Status, "tool": q.Tool, "agent": q.Agent,
		"newer_than": q.NewerThan, "older_than": q.OlderThan, "cursor": q.Cursor,
	} {
		if val != "" {
			v.Set(name, val)
		}
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// ApprovalPage lists one page of approval requests, oldest first, with
// the total its filters match and the cursor of the next page. It needs an
// operator key.
func (c *Client) ApprovalPage(ctx context.Context, q apitype.ListQuery) (apitype.ApprovalList, error) {
	var out apitype.ApprovalList
	_, _, err := c.do(ctx, http.MethodGet, listPath("/v1/approvals", q), nil, &out)
	return out, err
}

// ReconciliationPage lists one page of the reconciliation queue. It needs
// an operator key.
func (c *Client) ReconciliationPage(ctx context.Context, q apitype.ListQuery) (apitype.ReconciliationList, error) {
	var out apitype.ReconciliationList
	_, _, err := c.do(ctx, http.MethodGet, listPath("/v1/reconciliations", q), nil, &out)
	return out, err
}

// Sessions lists one page of sessions, newest first. It needs an operator
// key.
func (c *Client) Sessions(ctx context.Context, q apitype.ListQuery) (apitype.SessionList, error) {
	var out apitype.SessionList
	_, _, err := c.do(ctx, http.MethodGet, listPath("/v1/sessions", q), nil, &out)
	return out, err
}

// Refusals lists one page of the refusal log, newest first. It needs an
// operator key.
func (c *Client) Refusals(ctx context.Context, q apitype.ListQuery) (apitype.RefusalList, error) {
	var out apitype.RefusalList
	_, _, err := c.do(ctx, http.MethodGet, listPath("/v1/refusals", q), nil, &out)
	return out, err
}
