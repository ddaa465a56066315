package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/compensation"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// CompensationApproval opens the approval request a money-class
// compensation waits on, frozen on the arguments it would run with and
// routed to its tool's approver role. Opening is idempotent under the
// compensation's operation key. It opens nothing when there is nothing to
// run (the entry is settled, the effect never happened or its outcome is
// unknown): the compensation activity then settles the step as before.
func (a *Activities) CompensationApproval(ctx context.Context, in workflows.CompensationApprovalInput) (workflows.CompensationApproval, error) {
	entry, err := a.cfg.Store.UndoGet(ctx, in.Step.UndoID)
	if err != nil {
		return workflows.CompensationApproval{}, retryable(ErrTypeLedger, fmt.Errorf("error reading undo entry: %w", err))
	}
	if entry.Status != ledger.UndoPending && entry.Status != ledger.UndoFailed {
		return workflows.CompensationApproval{}, nil
	}
	eff, err := a.cfg.Store.EffectGet(ctx, entry.OperationKey)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return workflows.CompensationApproval{}, nil
	case err != nil:
		return workflows.CompensationApproval{}, retryable(ErrTypeLedger, fmt.Errorf("error reading the effect to undo: %w", err))
	case eff.Status != mt.EffectSucceeded:
		return workflows.CompensationApproval{}, nil
	}
	tool, call, err := a.compensationCall(ctx, entry, eff)
	if err != nil || tool.Effect != mt.EffectMoney || tool.Approval == nil || tool.Approval.ApproverRole == "" {
		// The compensation activity refuses what cannot be approved.
		return workflows.CompensationApproval{}, nil
	}
	var snap compensation.Snapshot
	_ = json.Unmarshal(entry.ArgsSnapshot, &snap) // compensationCall read it already
	recent, err := json.Marshal([]map[string]string{{
		"tool":    snap.Tool,
		"state":   string(mt.InvocationSucceeded),
		"summary": fmt.Sprintf("rollback by %s undoes %s (%s): %s", in.Actor, snap.Tool, snap.OperationKey, orNone(in.Reason)),
	}})
	if err != nil {
		return workflows.CompensationApproval{}, nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("error encoding approval context: %w", err))
	}
	req, err := a.cfg.Store.ApprovalRequestInsert(ctx, ledger.ApprovalRequest{
		// A compensation has no invocation of its own; its operation key
		// stands in for one.
		InvocationID:  call.OperationKey,
		OperationKey:  call.OperationKey,
		SessionID:     entry.SessionID,
		AgentID:       in.AgentID,
		Tool:          tool.Name,
		Args:          call.Args,
		ArgsHash:      call.ArgsHash,
		ApproverRole:  tool.Approval.ApproverRole,
		Reason:        "money: this compensation undoes " + snap.Tool + " and moves funds",
		RiskTags:      tool.RiskTags,
		Effect:        tool.Effect,
		Reversibility: tool.Reversibility,
		Context:       recent,
		Status:        ledger.ApprovalPending,
		TimeoutAt:     time.Now().UTC().Add(tool.Approval.Timeout),
	})
	if err != nil {
		return workflows.CompensationApproval{}, retryable(ErrTypeLedger, fmt.Errorf("error opening the compensation's approval request: %w", err))
	}
	return workflows.CompensationApproval{ApprovalID: req.ID, Timeout: tool.Approval.Timeout}, nil
}

func orNone(reason string) string {
	if reason == "" {
		return "no reason given"
	}
	return reason
}

// compensationApproved reads a money-class compensation's decision from the
// ledger. It answers "" when the compensation may run, and then rewrites in
// to the frozen arguments the approver saw; UndoAwaitingApproval while the
// request is pending; UndoFailed with the reason otherwise.
func (a *Activities) compensationApproved(ctx context.Context, tool *tools.Tool, step workflows.UndoStep, in *workflows.ExecuteInput) (string, string, error) {
	if step.ApprovalID == "" {
		return workflows.UndoFailed, tool.Name + " moves money and runs only with a human approval; no approval request was opened for it", nil
	}
	req, err := a.cfg.Store.ApprovalRequestGetDecided(ctx, step.ApprovalID)
	if err != nil {
		return "", "", retryable(ErrTypeLedger, fmt.Errorf("error reading approval request: %w", err))
	}
	if req.OperationKey != in.OperationKey {
		return workflows.UndoFailed, fmt.Sprintf("approval %s is for %s, not for %s", req.ID, req.OperationKey, in.OperationKey), nil
	}
	if req.Status == ledger.ApprovalPending && step.ApprovalExpired {
		// Money never approves itself, whatever the tool's timeout policy.
		if req, err = a.cfg.Store.ApprovalRequestExpire(ctx, req.ID, ledger.ApprovalTimedOut); err != nil {
			return "", "", retryable(ErrTypeLedger, fmt.Errorf("error closing expired approval request: %w", err))
		}
	}
	switch req.Status {
	case ledger.ApprovalPending:
		return workflows.UndoAwaitingApproval, fmt.Sprintf("%s waits for a human with the %s role (approval %s)", tool.Name, req.ApproverRole, req.ID), nil
	case ledger.ApprovalRejected:
		return workflows.UndoFailed, fmt.Sprintf("%s was rejected by %s (approval %s); nothing was undone", tool.Name, req.DecidedBy, req.ID), nil
	case ledger.ApprovalTimedOut:
		return workflows.UndoFailed, fmt.Sprintf("no one with the %s role decided on %s in time (approval %s); nothing was undone", req.ApproverRole, tool.Name, req.ID), nil
	case ledger.ApprovalApproved:
	default:
		return workflows.UndoFailed, fmt.Sprintf("approval %s is %s; money needs a human approval", req.ID, req.Status), nil
	}
	if _, hash, err := approval.Canonicalize(req.Args); err != nil || hash != req.ArgsHash {
		return "", "", nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("approval %s: frozen arguments no longer hash to the approved value", req.ID))
	}
	spender := "compensation:" + in.OperationKey
	tok, err := a.cfg.Store.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, spender)
	switch {
	case err == nil, errors.Is(err, ledger.ErrTokenUsed) && tok.UsedBy == spender:
	case errors.Is(err, ledger.ErrTokenUsed), errors.Is(err, ledger.ErrTokenMismatch),
		errors.Is(err, ledger.ErrTokenExpired), errors.Is(err, ledger.ErrNoToken):
		return workflows.UndoFailed, fmt.Sprintf("%s was refused at execution: %v; nothing was undone", tool.Name, err), nil
	default:
		return "", "", retryable(ErrTypeLedger, fmt.Errorf("error spending approval token: %w", err))
	}
	in.Args, in.ArgsHash = req.Args, req.ArgsHash
	return "", "", nil
}
