package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// resolveApproval resolves a gated call's decision: req as a claim found
// it, or read from the ledger when req is nil. It returns the request only
// when approved, and then rewrites in to the frozen (possibly modified)
// arguments the approver saw, whose hash the token spend is bound to. For
// any other decision the outcome is recorded and the request is nil.
func (a *Activities) resolveApproval(ctx context.Context, tool *tools.Tool, in *workflows.ExecuteInput, found *ledger.ApprovalRequest) (workflows.InvocationResult, *ledger.ApprovalRequest, error) {
	var (
		req ledger.ApprovalRequest
		err error
	)
	if found != nil {
		req = *found
	} else if req, err = a.cfg.Store.ApprovalRequestGetDecided(ctx, in.ApprovalID); err != nil {
		return workflows.InvocationResult{}, nil, retryable(ErrTypeLedger, fmt.Errorf("error reading approval request: %w", err))
	}
	if req.Status == ledger.ApprovalPending && in.ApprovalExpired {
		to := ledger.ApprovalTimedOut
		if tool.Approval.AutoApproveOnTimeout() {
			to = ledger.ApprovalAutoApproved
		}
		req, err = a.cfg.Store.ApprovalRequestExpire(ctx, in.ApprovalID, to)
		if err != nil {
			return workflows.InvocationResult{}, nil, retryable(ErrTypeLedger, fmt.Errorf("error closing expired approval request: %w", err))
		}
	}
	src := source(tool, *in)
	switch req.Status {
	case ledger.ApprovalPending:
		return workflows.InvocationResult{State: mt.InvocationAwaitingApproval}, nil, nil
	case ledger.ApprovalRejected:
		f := observation.Failure{
			Code:          mt.CodeApprovalRejected,
			Summary:       fmt.Sprintf("%s was rejected by an approver; nothing was done", in.Tool),
			RootCause:     "A human with the " + req.ApproverRole + " role rejected the request.",
			Remediation:   "Tell the person it was not done and, if they still want it, that a team member will follow up.",
			StopCondition: "Do not retry the same call: the rejection stands.",
			Wording:       "I wasn't able to get approval for that, so it has not been done.",
		}
		halted, err := a.haltOnReject(ctx, req, in.SessionID)
		if err != nil {
			return workflows.InvocationResult{}, nil, err
		}
		if halted {
			f.Summary = fmt.Sprintf("%s was rejected by an approver; nothing was done and session %s is halted", in.Tool, in.SessionID)
			f.RootCause += " The agent's policy (on_reject: halt) halts the session after a rejection, so the agent does not ask again."
			f.StopCondition = "Make no more calls in this session: they are refused (session_halted) until an operator resolves it."
			f.Payload = map[string]any{"session_state": mt.SessionHalted, "session_id": in.SessionID}
		}
		res, err := a.finish(ctx, *in, mt.InvocationRejected, observation.Error(f, src))
		return res, nil, err
	case ledger.ApprovalTimedOut:
		res, err := a.finish(ctx, *in, mt.InvocationTimedOut, observation.Error(observation.Failure{
			Code:          mt.CodeApprovalTimedOut,
			Summary:       fmt.Sprintf("No approver decided on %s in time; nothing was done", in.Tool),
			RootCause:     "The approval request expired under the tool's timeout policy.",
			Remediation:   "Tell the person it has not been done yet and that the team will follow up.",
			StopCondition: "Do not retry automatically: a new request needs a new operation key.",
			Wording:       "I couldn't get that approved in time, so it hasn't been done yet.",
		}, src))
		return res, nil, err
	case ledger.ApprovalApproved, ledger.ApprovalAutoApproved:
		_, hash, err := approval.Canonicalize(req.Args)
		if err != nil || hash != req.ArgsHash {
			return workflows.InvocationResult{}, nil, nonRetryable(workflows.ErrTypeInvariant,
				fmt.Errorf("approval %s: frozen arguments no longer hash to the approved value", req.ID))
		}
		in.Args, in.ArgsHash = req.Args, req.ArgsHash
		return workflows.InvocationResult{}, &req, nil
	}
	return workflows.InvocationResult{}, nil, nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("approval %s has unknown status %q", req.ID, req.Status))
}

// spendToken spends the approval's single-use token for the frozen
// arguments on its own, for a call with no single claim to spend it with
// (a read, a composite effect). ok is false when the spend was refused
// and the outcome recorded.
func (a *Activities) spendToken(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, req ledger.ApprovalRequest) (workflows.InvocationResult, bool, error) {
	s := a.spendFor(in)
	var (
		tok ledger.ApprovalToken
		err error
	)
	if req.Status == ledger.ApprovalAutoApproved {
		// A policy decided, so a policy mints the token it needs and this
		// execution spends it in the same transaction.
		tok, err = a.cfg.Store.ApprovalTokenMintSpend(ctx, s.ApprovalID, s.MintTTL, req.DecidedBy, s.UsedBy)
	} else {
		tok, err = a.cfg.Store.ApprovalTokenSpend(ctx, s.ApprovalID, in.ArgsHash, s.UsedBy)
	}
	switch {
	case err == nil:
		return workflows.InvocationResult{}, true, nil
	case errors.Is(err, ledger.ErrTokenUsed) && tok.UsedBy == s.UsedBy:
		return workflows.InvocationResult{}, true, nil
	case isSpendRefusal(err):
		res, ferr := a.spendRefused(ctx, tool, in, s.ApprovalID, err)
		return res, false, ferr
	default:
		return workflows.InvocationResult{}, false, retryable(ErrTypeLedger, fmt.Errorf("error spending approval token: %w", err))
	}
}

func isSpendRefusal(err error) bool {
	return errors.Is(err, ledger.ErrTokenExpired) || errors.Is(err, ledger.ErrTokenUsed) ||
		errors.Is(err, ledger.ErrTokenMismatch) || errors.Is(err, ledger.ErrNoToken)
}

// spendRefused records the outcome of a call whose token spend was
// refused: nothing was done.
func (a *Activities) spendRefused(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, approvalID string, err error) (workflows.InvocationResult, error) {
	if errors.Is(err, ledger.ErrTokenExpired) {
		return a.finish(ctx, in, mt.InvocationFailed, observation.Error(observation.Failure{
			Code:          mt.CodeApprovalExpired,
			Summary:       fmt.Sprintf("The approval for %s expired before it could run; nothing was done", in.Tool),
			RootCause:     "An approval token is valid for a short time only, and it ran out before execution.",
			Remediation:   "Tell the person it has not been done; ask again with a new operation key so an approver can decide afresh.",
			StopCondition: "Do not retry with this operation key.",
			Wording:       "That was approved, but too late to go through; it hasn't been done yet.",
		}, source(tool, in)))
	}
	return a.finish(ctx, in, mt.InvocationFailed, observation.Error(observation.Failure{
		Code:          mt.CodeApprovalClosed,
		Summary:       fmt.Sprintf("%s was refused at execution: %v; nothing was done", in.Tool, err),
		RootCause:     "An approval authorises one execution of exactly the approved arguments.",
		Remediation:   "Tell the person it has not been done; an operator should review approval " + approvalID + ".",
		StopCondition: "Do not retry with this operation key.",
		Wording:       "I wasn't able to do that; the team will review it.",
	}, source(tool, in)))
}

// haltOnReject halts the session of a rejected call when its agent's policy
// says so (on_reject: halt, the default). The halt is recorded before the
// rejection is, so no call the agent makes after it reads the rejection can
// be admitted. A session already halted or ended stays as it is.
func (a *Activities) haltOnReject(ctx context.Context, req ledger.ApprovalRequest, sessionID string) (bool, error) {
	agent, ok := a.cfg.Catalog.Load().Agent(req.AgentID)
	if sessionID == "" || ok && agent.OnReject == tools.OnRejectContinue {
		return false, nil
	}
	step := fmt.Sprintf("approval %s: %s rejected", req.ID, req.Tool)
	reason := fmt.Sprintf("%s rejected %s; the agent's policy halts the session after a rejection", req.DecidedBy, req.Tool)
	sess, err := a.cfg.Store.SessionHalt(ctx, sessionID, step, reason)
	if err != nil {
		return false, retryable(ErrTypeLedger, fmt.Errorf("error halting the session after a rejection: %w", err))
	}
	return sess.State == mt.SessionHalted, nil
}
