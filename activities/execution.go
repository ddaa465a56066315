package activities

import (
	"context"

	"github.com/maestro-run/maestro/internal/answer"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// execution is what Execute hands down to the ledger writes of an
// invocation's single effect, so they fold into the claim's and the
// settle's transactions: the approval token spent with the claim, and the
// invocation's outcome recorded with the settle. Compensations and the
// parts of a composite effect run without one and write as before.
type execution struct {
	invocationID string
	tool         *tools.Tool
	// spend is the approved call's token, spent with the claim; nil for
	// an ungated call.
	spend *ledger.ApprovalSpend
	// recorded is set once the invocation's outcome is in the ledger,
	// with state and obs as recorded.
	recorded bool
	state    mt.InvocationState
	obs      mt.Observation
	// announced is set when the recording also told the answer board.
	announced bool
	// answer is what the settle's recording of the outcome returned, with
	// the effect's state reads once the settle or readAfter has them; nil
	// until then.
	answer *answer.Answer
	// undecided is the spend's request when the claim found it not
	// approved for the call's arguments: nothing was claimed.
	undecided *ledger.ApprovalRequest
}

type executionKey struct{}

func withExecution(ctx context.Context, e *execution) context.Context {
	return context.WithValue(ctx, executionKey{}, e)
}

// executionOf returns the execution in's ledger writes belong to, or nil.
func executionOf(ctx context.Context, in workflows.ExecuteInput) *execution {
	e, _ := ctx.Value(executionKey{}).(*execution)
	if e == nil || e.recorded || in.InvocationID == "" || e.invocationID != in.InvocationID {
		return nil
	}
	return e
}

// finishParams is the invocation's outcome to record with the settle. A
// success in a session whose rollback has begun records the wording that
// says so (see duringRollback) instead.
func (e *execution) finishParams(ctx context.Context, in workflows.ExecuteInput, state mt.InvocationState, obs mt.Observation) ledger.InvocationFinishParams {
	f := ledger.InvocationFinishParams{
		InvocationID: in.InvocationID, State: state, Observation: withTraceID(ctx, obs),
		MessageProvider: messageProvider,
	}
	if state == mt.InvocationSucceeded && claimSession(in) != "" {
		back := withTraceID(ctx, rollingBackWording(e.tool, obs))
		f.SessionID, f.RollingBack = in.SessionID, &back
	}
	return f
}

// settleFinish settles the effect and records the invocation's outcome in
// one ledger write, and returns the outcome as recorded.
func (a *Activities) settleFinish(ctx context.Context, e *execution, in workflows.ExecuteInput, p ledger.EffectSettleParams) (workflows.InvocationResult, error) {
	state := invocationState(p.Status)
	f := e.finishParams(ctx, in, state, *p.Result)
	fin, err := a.cfg.Store.EffectSettleFinish(ctx, p, f)
	if err != nil {
		return workflows.InvocationResult{}, err
	}
	obs := f.Observation
	if fin.RollingBack {
		obs = *f.RollingBack
	}
	e.recorded, e.state, e.obs = true, state, obs
	e.answer = &answer.Answer{Invocation: fin.Invocation, Message: fin.Message, MessageRead: fin.MessageRead}
	if fin.StateReads != nil {
		e.answer.StateReads, e.answer.StateReadsRead = *fin.StateReads, true
	}
	return outcome(state, obs)
}

// messageProvider names the provider whose status for the message a
// receipt names the answer reports (its delivery); the settle reads it
// with the outcome.
const messageProvider = "twilio"

// settledExecution returns the execution whose settle recorded in's
// outcome, or nil.
func settledExecution(ctx context.Context, in workflows.ExecuteInput) *execution {
	e, _ := ctx.Value(executionKey{}).(*execution)
	if e == nil || !e.recorded || e.answer == nil || e.invocationID != in.InvocationID {
		return nil
	}
	return e
}

// spendOf is the token a claim for in spends, if any.
func spendOf(ctx context.Context, in workflows.ExecuteInput) *ledger.ApprovalSpend {
	if e := executionOf(ctx, in); e != nil {
		return e.spend
	}
	return nil
}
