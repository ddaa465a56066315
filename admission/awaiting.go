package admission

import (
	"context"
	"errors"
	"fmt"
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/store"
	"github.com/maestro-run/maestro/workflows"
)

// awaited is the approval request a session waits for.
type awaited struct {
	ApprovalID   string
	Tool         string
	InvocationID string
}

// suspendedWhileAwaiting reports whether a call on route waits for its
// session's pending approvals. Reads change nothing, and a record-deferred
// intent is not an effect until the post-call workflow delivers it (after
// the call, when the human has long decided), so both go on; every route
// that acts on a provider now does not.
func suspendedWhileAwaiting(route mt.Route) bool {
	switch route {
	case mt.RouteWrite, mt.RouteCompensable, mt.RouteGated:
		return true
	}
	return false
}

// awaitedApproval finds a pending approval request in the session: a gated
// call or a money compensation a human has not decided yet. A request
// past its timeout no longer holds the session (its workflow closes it
// under the tool's policy). A call whose operation key was already
// admitted is a repeat, answered with the original, and waits for nothing.
//
// The check reads the ledger outside the insert's transaction, so a write
// admitted at the same moment as a gated call may still run: the
// guarantee is for calls made after the agent was told the session waits.
func (g *Gate) awaitedApproval(ctx context.Context, sessionID, key string) (*awaited, error) {
	invs, err := g.cfg.Store.InvocationListBySession(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("error reading the session's calls: %w", err)
	}
	now := g.cfg.Now()
	var found *awaited
	for _, inv := range invs {
		if inv.OperationKey == key {
			return nil, nil
		}
		if found != nil || inv.State != mt.InvocationAwaitingApproval {
			continue
		}
		w, err := g.pendingApproval(ctx, inv.OperationKey, now)
		if err != nil {
			return nil, err
		}
		found = w
	}
	if found != nil {
		return found, nil
	}
	undo, err := g.cfg.Store.UndoListBySession(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("error reading the session's undo stack: %w", err)
	}
	for _, u := range undo {
		if u.Status != store.UndoPending {
			continue
		}
		if w, err := g.pendingApproval(ctx, workflows.CompensationOperationKey(u.ID), now); err != nil || w != nil {
			return w, err
		}
	}
	return nil, nil
}

// pendingApproval returns the request for operationKey if a human has yet
// to decide it, or nil.
func (g *Gate) pendingApproval(ctx context.Context, operationKey string, now time.Time) (*awaited, error) {
	req, err := g.cfg.Store.ApprovalRequestGetByKey(ctx, operationKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("error reading the approval request of %s: %w", operationKey, err)
	case req.Status != store.ApprovalPending || !req.TimeoutAt.After(now):
		return nil, nil
	}
	return &awaited{ApprovalID: req.ID, Tool: req.Tool, InvocationID: req.InvocationID}, nil
}
