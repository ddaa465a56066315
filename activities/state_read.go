package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// recordedBefore is the before read the claim is known to hold: known is
// set for a new claim, which recorded read (nil for none) as it inserted
// the key. Otherwise the ledger says.
type recordedBefore struct {
	known bool
	read  *mt.StateRead
}

// readBeforeClaim makes the first attempt's before read ahead of its claim,
// for the claim to record: when the claim is new, no one held the key, so
// the provider cannot have acted on it yet and the read is of the state
// before the effect, as one made under the claim would be. The read is
// discarded when the claim is not new. A read that failed and may succeed
// if retried fails the attempt before anything is claimed or sent, as a
// read under the claim would after handing the key back. Later attempts,
// likelier to find the key taken over or settled, read under the claim
// only.
func (a *Activities) readBeforeClaim(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput) (*mt.StateRead, error) {
	if tool.Before == nil || activity.GetInfo(ctx).Attempt > 1 {
		return nil, nil
	}
	r, ce := a.runStateRead(ctx, tool, tool.Before, templateData(in, nil, nil))
	if ce != nil && (ce.Retryable() || ce.Class == connectors.ClassUnknown) && !lastAttempt(ctx) {
		return nil, retryable(ErrTypeProviderRetry, ce)
	}
	return &r, nil
}

// readBefore runs the tool's before read under a claim this attempt holds
// and records it before anything is sent, so an attempt that takes the key
// over keeps what was read before the provider could have acted rather than
// read the state the effect may have changed. proceed is false when the
// read failed: the call then fails, or is retried, without its effect.
func (a *Activities) readBefore(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, owner string, recorded recordedBefore) (res workflows.InvocationResult, proceed bool, _ error) {
	if tool.Before == nil {
		return res, true, nil
	}
	read := recorded.read
	if !recorded.known {
		got, err := a.cfg.Store.EffectStateReadsGet(ctx, in.OperationKey)
		if err != nil {
			return res, false, retryable(ErrTypeLedger, fmt.Errorf("error reading the recorded before read: %w", err))
		}
		read = got.Before
	}
	if read == nil {
		r, ce := a.runStateRead(ctx, tool, tool.Before, templateData(in, nil, nil))
		if ce != nil && (ce.Retryable() || ce.Class == connectors.ClassUnknown) && !lastAttempt(ctx) {
			// Nothing was sent: hand the key back so the next attempt
			// claims it afresh and reads again.
			if err := a.cfg.Store.EffectRelease(ctx, in.OperationKey, owner); err != nil {
				return res, false, retryable(ErrTypeLedger, fmt.Errorf("error releasing operation key: %w", err))
			}
			return res, false, retryable(ErrTypeProviderRetry, ce)
		}
		err := a.cfg.Store.EffectRecordBeforeRead(ctx, in.OperationKey, owner, r)
		switch {
		case errors.Is(err, ledger.ErrLeaseLost):
			res, err := a.leaseLost(ctx, in)
			return res, false, err
		case err != nil:
			return res, false, retryable(ErrTypeLedger, fmt.Errorf("error recording the before read: %w", err))
		}
		read = &r
	}
	if read.Failed() {
		// Recorded as failed, by this attempt or an earlier one: nothing
		// was sent after it, and nothing is now.
		obs := beforeReadFailedObservation(tool, in, read)
		res, err := a.settle(ctx, in, ledger.EffectSettleParams{
			OperationKey: in.OperationKey,
			Owner:        owner,
			Status:       mt.EffectFailed,
			Result:       &obs,
			Error:        "before read failed: " + read.Error,
		})
		return res, false, err
	}
	return res, true, nil
}

// readAfterFirst makes an invocation's first attempt's read-back of its
// succeeded effect ahead of the settle, for the settle to record in the
// same write: no earlier attempt can have recorded one, and the read costs
// the time a read after the settle would, for one ledger write fewer. The
// effect stays claimed meanwhile, as it is while the provider answers; an
// attempt that dies here is taken over and reconciled like one that died
// before its settle. Later attempts, and effects without an invocation,
// read back after the settle (readAfter).
func (a *Activities) readAfterFirst(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, receipt *mt.Receipt) *mt.StateRead {
	if tool.After == nil || activity.GetInfo(ctx).Attempt > 1 || executionOf(ctx, in) == nil {
		return nil
	}
	r, _ := a.runStateRead(ctx, tool, tool.After, templateData(in, receipt, nil))
	return &r
}

// readWithSettle reports whether the settle that recorded in's outcome
// recorded its read-back too.
func readWithSettle(ctx context.Context, in workflows.ExecuteInput) bool {
	e := settledExecution(ctx, in)
	return e != nil && e.answer.StateReadsRead
}

// readAfter runs the tool's after read-back of a succeeded effect and
// records it, once: the ledger keeps the first read-back recorded, and a
// retry that finds one recorded reads nothing. The first attempt does not
// look, a round trip saved: no earlier attempt of its own can have
// recorded one, and should anything else have, the ledger keeps that one.
// It never changes the outcome: a read that fails is recorded as failed,
// and a ledger that does not answer leaves the read-back unrecorded.
func (a *Activities) readAfter(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, receipt *mt.Receipt) {
	if tool.After == nil {
		return
	}
	if activity.GetInfo(ctx).Attempt > 1 {
		// An earlier attempt may have recorded the read-back; the first
		// attempt has none to find, and the record below keeps the first.
		recorded, err := a.cfg.Store.EffectStateReadsGet(ctx, in.OperationKey)
		if err != nil {
			a.cfg.Logger.Warn("could not check for a recorded after read", "operation_key", in.OperationKey, "err", err)
			return
		}
		if recorded.After != nil {
			answerReads(ctx, in, recorded)
			return
		}
	}
	r, _ := a.runStateRead(ctx, tool, tool.After, templateData(in, receipt, nil))
	got, kept, err := a.cfg.Store.EffectRecordAfterRead(ctx, in.OperationKey, r)
	if err != nil {
		a.cfg.Logger.Warn("could not record the after read", "operation_key", in.OperationKey, "err", err)
		return
	}
	if kept {
		answerReads(ctx, in, got)
	}
}

// answerReads hands the effect's reads, as the ledger returned them, to
// the answer of the execution whose settle recorded in's outcome.
func answerReads(ctx context.Context, in workflows.ExecuteInput, r ledger.EffectStateReads) {
	if e := settledExecution(ctx, in); e != nil {
		e.answer.StateReads, e.answer.StateReadsRead = r, true
	}
}

// runStateRead renders and performs one declared read. A read that cannot
// be rendered or performed comes back recorded as failed; ce is the
// provider's error, if it was the provider that failed.
func (a *Activities) runStateRead(ctx context.Context, tool *tools.Tool, spec *tools.StateRead, data tools.TemplateData) (mt.StateRead, *connectors.Error) {
	rc, err := spec.Render(tool, data)
	if err != nil {
		return mt.StateRead{Source: describeRead(spec), Tool: spec.Tool, Error: err.Error(), ReadAt: time.Now().UTC()}, nil
	}
	read := mt.StateRead{Source: rc.Source, Tool: rc.Tool, Args: rc.Args}
	res, err := a.cfg.Connectors.Do(ctx, connectors.Call{Kind: rc.Call.Kind, Settings: rc.Call.Settings, Body: rc.Call.Body})
	read.ReadAt = time.Now().UTC()
	if err != nil {
		ce := connectors.AsError(err)
		read.Error = ce.Error()
		return read, ce
	}
	read.Found = !res.Empty
	read.State = res.Payload
	return read, nil
}

// describeRead names a read that could not be rendered.
func describeRead(spec *tools.StateRead) string {
	if spec.Get != nil {
		return "GET " + spec.Get.String()
	}
	return "tool " + spec.Tool
}

func beforeReadFailedObservation(tool *tools.Tool, in workflows.ExecuteInput, read *mt.StateRead) mt.Observation {
	wording, err := tool.RenderWording(tools.OutcomeFailure, templateData(in, nil, nil))
	if err != nil {
		wording = tools.WithNotice("I wasn't able to do that.", tool.RenderNotice(templateData(in, nil, nil)))
	}
	return observation.Error(observation.Failure{
		Code:    mt.CodeBeforeReadFailed,
		Summary: fmt.Sprintf("%s was not done: the state before it (%s) could not be read; nothing was sent", tool.Name, read.Source),
		RootCause: "The catalog reads what " + tool.Name + " changes just before changing it, so the change can be traced, " +
			"and that read failed: " + read.Error,
		Remediation:   "Tell the person it did not go through yet. Try once more later with a new operation key.",
		StopCondition: "Stop after one more failure and hand over to a human.",
		Wording:       wording,
	}, source(tool, in))
}
