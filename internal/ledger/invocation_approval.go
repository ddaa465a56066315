package ledger

import (
	"context"
	"fmt"
)

// InvocationGetWithApproval reads an invocation and its approval request's
// ID in one statement: a gated call's answer names both.
func (l *ledger) InvocationGetWithApproval(ctx context.Context, id string) (Invocation, string, error) {
	var (
		inv        Invocation
		approvalID string
	)
	dest := append(invocationDest(&inv), textCol{&approvalID})
	if err := l.conn.QueryRowContext(ctx, l.query("InvocationGetWithApproval"), id).Scan(dest...); err != nil {
		return Invocation{}, "", fmt.Errorf("error getting invocation %q: %w", id, notFound(err))
	}
	return inv, approvalID, nil
}
