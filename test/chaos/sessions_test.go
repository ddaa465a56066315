//go:build chaos

package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// retryFor bounds how long one request keeps being retried while API
// processes, PostgreSQL and Temporal restart around it.
const retryFor = 5 * time.Minute

// runSession makes a session's calls in order, as an agent would, then
// rolls the session back if the plan says so, then ends the call. Every
// request is retried on a transport error or 5xx with the same operation
// key, as an agent whose connection dropped would.
func runSession(ctx context.Context, agent *apiclient.Client, sem chan struct{}, s int, calls []*call, done *atomic.Int64) error {
	for _, c := range calls {
		began := time.Now()
		resp, err := retry(ctx, sem, func() (apiclient.Response, error) {
			return agent.Invoke(ctx, apitype.InvokeRequest{
				SessionID:      c.session,
				Tool:           c.tool,
				Args:           []byte(c.args),
				OperationKey:   c.key,
				SessionContext: map[string]string{"caller_number": callerNumber, "tenant_id": tenantID},
			})
		})
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.tool, c.key, err)
		}
		for resp.Pending {
			if err := sleep(ctx, resp.RetryAfter); err != nil {
				return fmt.Errorf("%s %s: still pending: %w", c.tool, c.key, err)
			}
			id := resp.InvocationID
			if resp, err = retry(ctx, sem, func() (apiclient.Response, error) { return agent.Invocation(ctx, id) }); err != nil {
				return fmt.Errorf("%s %s: %w", c.tool, c.key, err)
			}
		}
		c.latency = time.Since(began)
		c.state = string(resp.State)
		if r := resp.Observation.Receipt; r != nil {
			c.receipt = r.ID
			if c.tool == "send_sms" {
				c.receipt = r.Fields["message_sid"]
			}
		}
		done.Add(1)
	}
	session := calls[0].session
	if rolledBack(s) {
		if _, err := retry(ctx, sem, func() (apitype.RollbackResult, error) { return agent.Rollback(ctx, session, "chaos rollback") }); err != nil {
			return fmt.Errorf("rollback: %w", err)
		}
	}
	if _, err := retry(ctx, sem, func() (apitype.EndResult, error) { return agent.End(ctx, session, apitype.EndRequest{}) }); err != nil {
		return fmt.Errorf("end: %w", err)
	}
	return nil
}

// retry runs f while it fails the way a restarting API fails: no
// connection, a dropped one, or a 5xx.
func retry[T any](ctx context.Context, sem chan struct{}, f func() (T, error)) (T, error) {
	deadline := time.Now().Add(retryFor)
	for {
		v, err := withSlot(ctx, sem, f)
		if err == nil || !transient(err) || time.Now().After(deadline) {
			return v, err
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return v, err
		}
	}
}

func transient(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var apiErr *apiclient.Error
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode >= 500
	}
	return true
}

func withSlot[T any](ctx context.Context, sem chan struct{}, f func() (T, error)) (T, error) {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
	defer func() { <-sem }()
	return f()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// decisions is what the operator decided: approval ID to invocation ID.
// Refunds are approved or rejected as the plan says; anything else asking
// for approval (a rollback's cancelled refund) is approved.
type decisions struct {
	approved, rejected, other map[string]string
}

// operate is the scripted operator: it decides every pending approval
// until ctx ends, rejecting the refunds of the sessions the plan says to.
// A decision whose answer was lost (its API process killed, say) is made
// again; if the first had committed, the request reads as decided, and is
// counted as the operator decided it.
func operate(ctx context.Context, t *testing.T, ops *apiclient.Client) decisions {
	d := decisions{approved: map[string]string{}, rejected: map[string]string{}, other: map[string]string{}}
	unanswered := map[string]apitype.Approval{}
	for ctx.Err() == nil {
		list, err := ops.Approvals(ctx, "pending")
		if err != nil && ctx.Err() == nil && !transient(err) {
			t.Errorf("listing approvals: %v", err)
		}
		todo := list.Approvals
		for _, a := range unanswered {
			if !slices.ContainsFunc(todo, func(p apitype.Approval) bool { return p.ID == a.ID }) {
				todo = append(todo, a)
			}
		}
		for _, a := range todo {
			if d.decided(a.ID) {
				continue
			}
			s, err := strconv.Atoi(strings.TrimPrefix(a.SessionID, "chaos-"))
			if err != nil {
				t.Errorf("approval %s for unknown session %q", a.ID, a.SessionID)
				continue
			}
			decide, into, want := ops.Approve, d.approved, "approved"
			switch {
			case a.Tool != "issue_refund":
				into = d.other
			case rejected(s):
				decide, into, want = ops.Reject, d.rejected, "rejected"
			}
			_, err = decide(ctx, a.ID, "chaos operator")
			if _, retried := unanswered[a.ID]; retried && apiclient.IsRefusal(err, mt.CodeApprovalClosed) {
				err = decidedEarlier(ctx, ops, a.ID, want)
			}
			if err != nil {
				if ctx.Err() == nil && !transient(err) {
					t.Errorf("deciding %s: %v", a.ID, err)
				}
				if transient(err) {
					unanswered[a.ID] = a
				}
				continue
			}
			delete(unanswered, a.ID)
			into[a.ID] = a.InvocationID
		}
		_ = sleep(ctx, 200*time.Millisecond)
	}
	return d
}

func (d decisions) decided(id string) bool {
	for _, m := range []map[string]string{d.approved, d.rejected, d.other} {
		if _, ok := m[id]; ok {
			return true
		}
	}
	return false
}

// decidedEarlier checks that an approval the operator decided, without
// hearing the answer, is in the status the decision gave it.
func decidedEarlier(ctx context.Context, ops *apiclient.Client, id, want string) error {
	a, err := ops.Approval(ctx, id)
	if err != nil {
		return err
	}
	if a.Status != want {
		return fmt.Errorf("approval %s, decided %s without an answer, is %s", id, want, a.Status)
	}
	return nil
}

// terminalForTool is the state a call of the tool ends in when nothing
// went wrong.
func terminalForTool(tool string, s int) mt.InvocationState {
	switch {
	case tool == "take_message":
		return mt.InvocationRecorded
	case tool == "issue_refund" && rejected(s):
		return mt.InvocationRejected
	}
	return mt.InvocationSucceeded
}
