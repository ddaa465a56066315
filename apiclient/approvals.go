package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/maestro-run/maestro/apitype"
)

// Approvals lists the first page of approval requests (see ApprovalPage),
// optionally in one status. It needs an operator key.
func (c *Client) Approvals(ctx context.Context, status string) (apitype.ApprovalList, error) {
	return c.ApprovalPage(ctx, apitype.ListQuery{Status: status})
}

// Approval reads one approval request with its event log.
func (c *Client) Approval(ctx context.Context, id string) (apitype.Approval, error) {
	var out apitype.Approval
	_, _, err := c.do(ctx, http.MethodGet, "/v1/approvals/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Approve approves a request as the key's operator.
func (c *Client) Approve(ctx context.Context, id, reason string) (apitype.Approval, error) {
	return c.decide(ctx, id, "approve", apitype.DecisionRequest{Reason: reason})
}

// Reject rejects a request; the call is cancelled and the agent told so.
func (c *Client) Reject(ctx context.Context, id, reason string) (apitype.Approval, error) {
	return c.decide(ctx, id, "reject", apitype.DecisionRequest{Reason: reason})
}

// Modify approves edited arguments in place of the frozen ones.
func (c *Client) Modify(ctx context.Context, id string, args json.RawMessage, reason string) (apitype.Approval, error) {
	return c.decide(ctx, id, "modify", apitype.DecisionRequest{Reason: reason, Args: args})
}

func (c *Client) decide(ctx context.Context, id, verb string, body apitype.DecisionRequest) (apitype.Approval, error) {
	var out apitype.Approval
	_, _, err := c.do(ctx, http.MethodPost, "/v1/approvals/"+url.PathEscape(id)+"/"+verb, body, &out)
	return out, err
}

// Audit runs the money-versus-approval audit scan.
func (c *Client) Audit(ctx context.Context) (apitype.AuditReport, error) {
	var out apitype.AuditReport
	_, _, err := c.do(ctx, http.MethodGet, "/v1/audit", nil, &out)
	return out, err
}
