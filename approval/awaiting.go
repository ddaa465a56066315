package approval

import (
	"context"
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
	ApprovalRequestListPendingBySession(ctx context.Context, sessionID string) ([]ledger.ApprovalRequest, error)
	InvocationListBySession(ctx context.Context, sessionID string) ([]ledger.Invocation, error)
	UndoListBySession(ctx context.Context, sessionID string) ([]ledger.UndoEntry, error)
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
// Every write asks, and a session almost never waits, so the pending
// requests are read first: with none, nothing else is read.
//
// The check reads the ledger outside the insert's transaction, so a write
// admitted at the same moment as a gated call may still run: the
// guarantee is for calls made after the agent was told the session waits.
func AwaitedIn(ctx context.Context, store Holds, sessionID, key string, now time.Time) (*Awaited, error) {
	reqs, err := store.ApprovalRequestListPendingBySession(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("error reading the session's pending approvals: %w", err)
	}
	pending := map[string]ledger.ApprovalRequest{}
	for _, r := range reqs {
		if r.TimeoutAt.After(now) {
			pending[r.OperationKey] = r
		}
	}
	if len(pending) == 0 {
		return nil, nil
	}
	invs, err := store.InvocationListBySession(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("error reading the session's calls: %w", err)
	}
	var found *Awaited
	for _, inv := range invs {
		if inv.OperationKey == key {
			return nil, nil
		}
		if r, ok := pending[inv.OperationKey]; ok && found == nil && inv.State == mt.InvocationAwaitingApproval {
			found = awaited(r)
		}
	}
	if found != nil {
		return found, nil
	}
	undo, err := store.UndoListBySession(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("error reading the session's undo stack: %w", err)
	}
	for _, u := range undo {
		if r, ok := pending[workflows.CompensationOperationKey(u.ID)]; ok && u.Status == ledger.UndoPending {
			return awaited(r), nil
		}
	}
	return nil, nil
}

func awaited(r ledger.ApprovalRequest) *Awaited {
	return &Awaited{ApprovalID: r.ID, Tool: r.Tool, InvocationID: r.InvocationID}
}
