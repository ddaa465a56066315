package apiclient

import (
	"context"
	"net/http"
	"net/url"

	"github.com/maestro-run/maestro/apitype"
)

// Session reads a session: its calls, undo stack, deferred work and
// post-call deliveries.
func (c *Client) Session(ctx context.Context, id string) (apitype.Session, error) {
	var out apitype.Session
	_, _, err := c.do(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Rollback runs the session's compensations in LIFO order.
func (c *Client) Rollback(ctx context.Context, id, reason string) (apitype.RollbackResult, error) {
	var out apitype.RollbackResult
	_, _, err := c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/rollback", apitype.RollbackRequest{Reason: reason}, &out)
	return out, err
}

// Resolve clears a halted session with a recorded reason (operator key):
// the human undid by hand what the rollback could not.
func (c *Client) Resolve(ctx context.Context, id, reason string) (apitype.Session, error) {
	return c.resolve(ctx, id, apitype.ResolveRequest{Reason: reason})
}

// ResolveRetry clears a halted session and runs its rollback again, the
// compensations it could not run included (operator key).
func (c *Client) ResolveRetry(ctx context.Context, id, reason string) (apitype.Session, error) {
	return c.resolve(ctx, id, apitype.ResolveRequest{Reason: reason, Retry: true})
}

func (c *Client) resolve(ctx context.Context, id string, req apitype.ResolveRequest) (apitype.Session, error) {
	var out apitype.Session
	_, _, err := c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/resolve", req, &out)
	return out, err
}

// SetFact records a session fact the operator vouches for (operator key).
func (c *Client) SetFact(ctx context.Context, id, name, value string) (apitype.Session, error) {
	var out apitype.Session
	_, _, err := c.do(ctx, http.MethodPut, "/v1/sessions/"+url.PathEscape(id)+"/facts/"+url.PathEscape(name), apitype.FactRequest{Value: value}, &out)
	return out, err
}

// End delivers the call-ended signal with the transcript.
func (c *Client) End(ctx context.Context, id string, req apitype.EndRequest) (apitype.EndResult, error) {
	var out apitype.EndResult
	_, _, err := c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/end", req, &out)
	return out, err
}
