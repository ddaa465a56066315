package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/maestro-run/maestro/maestrotype"
)

// ActivityRetry retries only what the activity marks retryable: a provider
// that was unreachable or answered 5xx, or a lease still held by another
// attempt. The Execute activity settles the ledger itself on its last
// attempt, so the workflow never sees an effect left half-recorded.
var ActivityRetry = &temporal.RetryPolicy{
	InitialInterval:    500 * time.Millisecond,
	BackoffCoefficient: 2,
	MaximumInterval:    20 * time.Second,
	MaximumAttempts:    6,
}

// ActivityTimeout bounds one attempt; connectors bound each provider call
// well below it.
const ActivityTimeout = 45 * time.Second

// InvocationWorkflow runs one tool invocation along its route.
func InvocationWorkflow(ctx workflow.Context, in InvocationInput) (InvocationResult, error) {
	state := maestrotype.InvocationRunning
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (maestrotype.InvocationState, error) {
		return state, nil
	}); err != nil {
		return InvocationResult{}, fmt.Errorf("error registering query: %w", err)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: ActivityTimeout,
		RetryPolicy:         ActivityRetry,
	})

	var res InvocationResult
	var err error
	switch in.Route {
	case maestrotype.RouteRead:
		err = executeRead(ctx, in).Get(ctx, &res)
	case maestrotype.RouteWrite, maestrotype.RouteCompensable:
		ein := executeInput(in, false)
		ein.Background = backgroundParts(ctx, in)
		err = workflow.ExecuteActivity(ctx, ActivityExecute, ein).Get(ctx, &res)
	case maestrotype.RouteDeferred:
		err = workflow.ExecuteActivity(ctx, ActivityRecordDeferred, executeInput(in, false)).Get(ctx, &res)
	case maestrotype.RouteGated:
		res, err = awaitApproval(ctx, in, &state)
	default:
		return InvocationResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("unknown route %q", in.Route), ErrTypeUnknownRoute, nil)
	}
	if err == nil && len(res.PendingParts) > 0 {
		state = res.State
		res, err = deliverParts(ctx, in, res.PendingParts)
	}
	if err != nil {
		res, err = finalize(ctx, in, err)
		if err != nil {
			return InvocationResult{}, err
		}
	}
	state = res.State
	return res, nil
}

// partsVersion marks invocations that may answer while parts of a
// composite effect are still to go out, and deliver them afterwards;
// histories recorded before it ran every part within the one activity.
const partsVersion = "composite-parts"

// backgroundParts reports whether this run delivers a composite effect's
// remaining parts after answering.
func backgroundParts(ctx workflow.Context, in InvocationInput) bool {
	return in.Revision >= 1 || workflow.GetVersion(ctx, partsVersion, workflow.DefaultVersion, 1) == 1
}

// PartsActivityID names the activity that delivers the remaining parts, so
// the Execute activity can hand the effect's claim over to its first
// attempt by name.
const PartsActivityID = "deliver-parts"

// PartsRetry keeps delivering a part through a provider outage well past
// the call: the person has been told it has not gone through yet, and the
// agent hears how it ended by callback.
var PartsRetry = &temporal.RetryPolicy{
	InitialInterval:    time.Second,
	BackoffCoefficient: 2,
	MaximumInterval:    30 * time.Second,
}

// PartsTimeout bounds how long a remaining part is retried before the
// activity settles it as not delivered.
const PartsTimeout = 24 * time.Hour

// deliverParts runs until every remaining part of the invocation's effect
// is settled, and returns the invocation's final result. It runs in the
// invocation's own workflow, so a worker crash loses nothing: Temporal
// retries the activity, whose ledger claims say what already went out.
func deliverParts(ctx workflow.Context, in InvocationInput, parts []string) (InvocationResult, error) {
	pctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:             PartsActivityID,
		StartToCloseTimeout:    ActivityTimeout,
		ScheduleToCloseTimeout: PartsTimeout,
		RetryPolicy:            PartsRetry,
	})
	var res InvocationResult
	err := workflow.ExecuteActivity(pctx, ActivityDeliverParts, executeInput(in, false)).Get(pctx, &res)
	return res, err
}

// finalizeVersion marks invocations that finalize the ledger when they end
// in error; histories recorded before it ended with the error alone.
const finalizeVersion = "finalize-on-error"

// FinalizeRetry keeps finalizing through a ledger outage and until a lease
// another attempt holds has run out. What it still cannot finish, the
// sweeper does.
var FinalizeRetry = &temporal.RetryPolicy{
	InitialInterval:    time.Second,
	BackoffCoefficient: 2,
	MaximumInterval:    time.Minute,
	MaximumAttempts:    10,
}

// finalize leaves the invocation final in the ledger after an error the
// workflow cannot recover from (retries exhausted, an invariant broken), so
// the agent re-sending its key hears an outcome rather than "still
// running". It returns the final result, or the original error if the
// ledger could not be written either.
func finalize(ctx workflow.Context, in InvocationInput, cause error) (InvocationResult, error) {
	if workflow.GetVersion(ctx, finalizeVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return InvocationResult{}, cause
	}
	fctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: ActivityTimeout,
		RetryPolicy:         FinalizeRetry,
	})
	var res InvocationResult
	err := workflow.ExecuteActivity(fctx, ActivityFinalize, FinalizeInput{
		Execute: executeInput(in, false),
		Cause:   rootCause(cause),
	}).Get(fctx, &res)
	if err != nil {
		workflow.GetLogger(ctx).Error("could not finalize the invocation; the sweeper will", "cause", cause, "err", err)
		return InvocationResult{}, cause
	}
	return res, nil
}

// rootCause is the innermost error's message: what the activity reported,
// without the wrapping Temporal adds on the way to the workflow.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// readLocalVersion marks invocations whose read runs as a local activity;
// histories recorded before it replay the regular activity they hold.
const readLocalVersion = "read-local-activity"

// executeRead runs a read as a local activity: it changes nothing at the
// provider, so repeating it after a crash is harmless, and it saves the
// activity's task round trip and most of its history events (ADR 8).
// Writes stay regular activities, visible on the server while in flight.
func executeRead(ctx workflow.Context, in InvocationInput) workflow.Future {
	if in.Revision < 1 && workflow.GetVersion(ctx, readLocalVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return workflow.ExecuteActivity(ctx, ActivityExecute, executeInput(in, false))
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: ActivityTimeout,
		RetryPolicy:         ActivityRetry,
	})
	return workflow.ExecuteLocalActivity(lctx, ActivityExecute, executeInput(in, false))
}

// awaitApproval sleeps until a signal or the policy timeout wakes it, then
// lets the Execute activity read the decision from the ledger and act on it.
// A wake-up that finds the request still pending (a stray signal) goes back
// to waiting; the signal carries no authority of its own.
func awaitApproval(ctx workflow.Context, in InvocationInput, state *maestrotype.InvocationState) (res InvocationResult, err error) {
	*state = maestrotype.InvocationAwaitingApproval
	lean := in.Revision >= 1
	signals := workflow.GetSignalChannel(ctx, SignalApprovalDecided)
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	var timer workflow.Future
	startTimer := func() workflow.Future {
		if timer == nil {
			timer = workflow.NewTimer(timerCtx, in.ApprovalTimeout)
		}
		return timer
	}
	if lean {
		// The timer guards a wait; a call that never waits needs none. A
		// timer left running when the workflow completes is dropped with
		// it, so it is cancelled only if the workflow goes on to deliver
		// parts, where its firing would cost a workflow task.
		defer func() {
			if timer != nil && err == nil && len(res.PendingParts) > 0 {
				cancelTimer()
			}
		}()
	} else {
		defer cancelTimer()
		startTimer()
	}
	timedOut := false
	decided := in.PreApproved
	background := backgroundParts(ctx, in)
	if in.Notify && !decided {
		startNotify(ctx, in.ApprovalID)
	}
	for {
		if !decided {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) {
				var d ApprovalDecision
				c.Receive(ctx, &d)
			})
			if !timedOut {
				sel.AddFuture(startTimer(), func(workflow.Future) { timedOut = true })
			}
			sel.Select(ctx)
		}
		ein := executeInput(in, timedOut)
		ein.Background = background
		if err := workflow.ExecuteActivity(ctx, ActivityExecute, ein).Get(ctx, &res); err != nil {
			return InvocationResult{}, err
		}
		if res.State != maestrotype.InvocationAwaitingApproval {
			return res, nil
		}
		decided = false
	}
}

func executeInput(in InvocationInput, timedOut bool) ExecuteInput {
	return ExecuteInput{
		InvocationID:    in.InvocationID,
		OperationKey:    in.OperationKey,
		SessionID:       in.SessionID,
		Tool:            in.Tool,
		Route:           in.Route,
		Args:            in.Args,
		ArgsHash:        in.ArgsHash,
		ApprovalID:      in.ApprovalID,
		ApprovalExpired: timedOut,
		CatalogVersion:  in.CatalogVersion,
	}
}
