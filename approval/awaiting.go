package approval

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// Awaited is the approval request a session waits for.
type Awaited struct {
	ApprovalID   string
	Tool         string
	InvocationID string
}

// Holds is the part of the ledger that says what a session waits for.
type Holds interface {
	InvocationListBySession(ctx context.Context, sessionID string) ([]ledger.Invocation, error)
	UndoListBySession(ctx context.Context, sessionID string) ([]ledger.UndoEntry, error)
	ApprovalRequestGetByKey(ctx context.Context, operationKey string) (ledger.ApprovalRequest, error)
}

// SuspendsWhileAwaiting reports whether a call on route waits for its
// session's pending approvals. Reads change nothing, and a record-deferred
// intent is not an effect until the post-call workflow delivers it (after
// the call, when the human has long decided), so both go on; every route
// that acts on a provider now does not.
func SuspendsWhileAwaiting(route mt.Route) bool {
	switch route {
	case mt.RouteWrite, mt.RouteCompensable, mt.RouteGated:
		return true
	}
	return false
}

// AwaitedIn finds a pending approval request in the session: a gated
// call or a money compensation a human has not decided yet. A request
// past its timeout no longer holds the session (its workflow closes it
// under the tool's policy). A call whose operation key was already
// admitted is a repeat, answered with the original, and waits for nothing.
//
// The check reads the ledger outside the insert's transaction, so a write
// admitted at the same moment as a gated call may still run: the
// guarantee is for calls made after the agent was told the session waits.
func AwaitedIn(ctx context.Context, store Holds, sessionID, key string, now time.Time) (*Awaited, error) {
	invs, err := store.InvocationListBySession(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("error reading the session's calls: %w", err)
	}
	var found *Awaited
	for _, inv := range invs {
		if inv.OperationKey == key {
			return nil, nil
		}
		if found != nil || inv.State != mt.InvocationAwaitingApproval {
			continue
		}
		w, err := pending(ctx, store, inv.OperationKey, now)
		if err != nil {
			return nil, err
		}
		found = w
	}
	if found != nil {
		return found, nil
	}
	undo, err := store.UndoListBySession(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("error reading the session's undo stack: %w", err)
	}
	for _, u := range undo {
		if u.Status != ledger.UndoPending {
			continue
		}
		if w, err := pending(ctx, store, workflows.CompensationOperationKey(u.ID), now); err != nil || w != nil {
			return w, err
		}
	}
	return nil, nil
}

// pending returns the request for operationKey if a human has yet to
// decide it, or nil.
func pending(ctx context.Context, store Holds, operationKey string, now time.Time) (*Awaited, error) {
	req, err := store.ApprovalRequestGetByKey(ctx, operationKey)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("error reading the approval request of %s: %w", operationKey, err)
	case req.Status != ledger.ApprovalPending || !req.TimeoutAt.After(now):
		return nil, nil
	}
	return &Awaited{ApprovalID: req.ID, Tool: req.Tool, InvocationID: req.InvocationID}, nil
}
