package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// session is the state a SessionWorkflow holds. Signals and updates mutate
// it; the main loop awaits the changes.
type session struct {
	in       SessionInput
	view     SessionView
	busy     bool // a rollback or resolve is running
	ended    *CallEnded
	autoRoll bool // the agent's policy asked for a rollback
	awaiting bool // a compensation waits for a human approval
	// closed is set while a rollback holds the session closed in the
	// ledger; finishing the rollback opens it again.
	closed bool
	// root is the workflow's context with activity options; a rollback
	// that waits for an approval goes on in a coroutine under it.
	root workflow.Context
	// running is the rollback under way, so a request repeated while it
	// runs (an agent whose connection dropped) gets its answer instead of
	// a refusal.
	running *rollbackRun
}

// rollbackRun is one rollback's answer, once it has one: its result, or
// its pending result while a compensation waits for a human.
type rollbackRun struct {
	answered bool
	res      RollbackResult
}

// SessionWorkflow is one call or agent run: its calls with outcomes, its
// saga, its halt, and the hand-over of deferred work when the call ends.
func SessionWorkflow(ctx workflow.Context, in SessionInput) (SessionView, error) {
	if in.MaxLifetime == 0 {
		in.MaxLifetime = 24 * time.Hour
	}
	s := &session{in: in, view: SessionView{SessionID: in.SessionID, State: mt.SessionActive, Calls: []CallRecord{}}}
	if err := s.register(ctx); err != nil {
		return SessionView{}, err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: ActivityTimeout, RetryPolicy: ActivityRetry})
	s.root = actx

	expired := false
	workflow.Go(ctx, func(ctx workflow.Context) {
		if workflow.NewTimer(ctx, in.MaxLifetime).Get(ctx, nil) == nil {
			expired = true
		}
	})
	for {
		if err := workflow.Await(ctx, func() bool { return !s.busy && (s.ended != nil || s.autoRoll || expired) }); err != nil {
			return s.snapshot(), err
		}
		if s.autoRoll {
			s.autoRoll = false
			s.runRollback(actx, RollbackRequest{Actor: "policy:on_failure", Reason: "a call failed and the agent's policy rolls the session back"})
			continue
		}
		break
	}
	if s.ended == nil {
		// Nobody ended the call: end it now so recorded intents are still
		// delivered rather than forgotten.
		s.ended = &CallEnded{}
		if err := workflow.ExecuteActivity(actx, ActivitySessionEnd, in.SessionID).Get(ctx, nil); err != nil {
			return s.snapshot(), err
		}
	}
	if err := s.startPostCall(ctx); err != nil {
		return s.snapshot(), err
	}
	s.view.State = mt.SessionEnded
	return s.snapshot(), nil
}

func (s *session) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QuerySession, func() (SessionView, error) { return s.snapshot(), nil }); err != nil {
		return fmt.Errorf("error registering session query: %w", err)
	}
	calls := workflow.GetSignalChannel(ctx, SignalCallRecorded)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var rec CallRecord
			calls.Receive(ctx, &rec)
			s.record(rec)
		}
	})
	ends := workflow.GetSignalChannel(ctx, SignalCallEnded)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var ce CallEnded
			ends.Receive(ctx, &ce)
			if s.ended == nil { // a repeated call-ended signal delivers nothing twice
				s.ended = &ce
			}
		}
	})
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: ActivityTimeout, RetryPolicy: ActivityRetry})
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateRollback,
		func(ctx workflow.Context, req RollbackRequest) (RollbackResult, error) {
			if run := s.running; run != nil {
				// The same request again, or another one while the saga
				// runs: either way the session is being rolled back, and
				// the answer is that rollback's.
				err := workflow.Await(ctx, func() bool { return run.answered })
				return run.res, err
			}
			return s.runRollback(workflow.WithActivityOptions(ctx, workflow.GetActivityOptions(actx)), req), nil
		},
		workflow.UpdateHandlerOptions{Validator: func(req RollbackRequest) error {
			switch {
			case s.running != nil:
				return nil
			case s.busy:
				return errors.New("the session is being resolved")
			case s.view.State == mt.SessionHalted:
				return fmt.Errorf("the session is halted at %s: resolve it first", s.view.HaltStep)
			case s.ended != nil:
				return errors.New("the call has ended")
			}
			return nil
		}},
	); err != nil {
		return fmt.Errorf("error registering rollback: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateResolve,
		func(ctx workflow.Context, req ResolveRequest) (SessionView, error) {
			ctx = workflow.WithActivityOptions(ctx, workflow.GetActivityOptions(actx))
			s.busy = true
			if err := workflow.ExecuteActivity(ctx, ActivitySessionResolve, req, s.in.SessionID).Get(ctx, nil); err != nil {
				s.busy = false
				return s.snapshot(), err
			}
			s.view.State, s.view.HaltStep, s.view.HaltReason = mt.SessionActive, "", ""
			if !req.Retry {
				s.busy = false
				return s.snapshot(), nil
			}
			// The ledger marked the session as being rolled back with the
			// resolve, so nothing was admitted in between.
			s.runRollback(ctx, RollbackRequest{Actor: req.Actor, Reason: "retry after a halt: " + req.Reason})
			return s.snapshot(), nil
		},
		workflow.UpdateHandlerOptions{Validator: func(req ResolveRequest) error {
			switch {
			case s.view.State != mt.SessionHalted && !req.HaltedInLedger:
				return errors.New("the session is not halted")
			case req.Reason == "":
				return errors.New("a resolution needs a reason")
			}
			return nil
		}},
	); err != nil {
		return fmt.Errorf("error registering resolve: %w", err)
	}
	return nil
}

// record keeps the latest state of each call, in admission order.
func (s *session) record(rec CallRecord) {
	for i := range s.view.Calls {
		if s.view.Calls[i].InvocationID == rec.InvocationID {
			s.view.Calls[i] = rec
			s.maybeAutoRollback(rec)
			return
		}
	}
	s.view.Calls = append(s.view.Calls, rec)
	s.maybeAutoRollback(rec)
}

func (s *session) maybeAutoRollback(rec CallRecord) {
	if s.in.OnFailure == mt.OnFailureRollback && rec.State == mt.InvocationFailed && s.view.State == mt.SessionActive {
		s.autoRoll = true
	}
}

// compensationApprovalVersion marks sessions whose money-class
// compensations wait for a human; histories recorded before it never
// listed a step that needs approval.
const compensationApprovalVersion = "compensation-approval"

// rollbackSettlesVersion marks sessions whose rollback closes the session
// in the ledger, waits for the calls in flight and holds a step whose
// effect is still unsettled; histories recorded before it listed and
// compensated at once.
const rollbackSettlesVersion = "rollback-settles-in-flight"

// runRollback runs a rollback as the session's running one, which
// requests that arrive while it runs join.
func (s *session) runRollback(ctx workflow.Context, req RollbackRequest) RollbackResult {
	run := &rollbackRun{}
	s.running = run
	res := s.rollback(ctx, req)
	run.res, run.answered = res, true
	return res
}

// rollback runs the undo stack in LIFO order, one compensation activity per
// entry. It first closes the session to new effects, then waits (bounded)
// for the effects already in flight, so that what settles while it waits
// is undone too. The first compensation that fails after its retries, or
// whose effect is still unsettled, halts the session; nothing after it
// runs.
func (s *session) rollback(ctx workflow.Context, req RollbackRequest) RollbackResult {
	s.busy = true
	res := RollbackResult{Actor: req.Actor, Reason: req.Reason, Steps: []UndoOutcome{}}
	s.closed = workflow.GetVersion(ctx, rollbackSettlesVersion, workflow.DefaultVersion, 1) == 1
	if s.closed {
		if err := workflow.ExecuteActivity(ctx, ActivitySessionRollbackBegin, s.in.SessionID).Get(ctx, nil); err != nil {
			return s.finishRollback(ctx, s.halt(ctx, res, "closing the session to new calls", err.Error()))
		}
	}
	var steps []UndoStep
	if err := workflow.ExecuteActivity(ctx, ActivityUndoList, s.in.SessionID).Get(ctx, &steps); err != nil {
		return s.finishRollback(ctx, s.halt(ctx, res, "listing the undo stack", err.Error()))
	}
	if s.closed {
		if err := s.awaitInFlight(ctx, steps); err != nil {
			return s.finishRollback(ctx, s.halt(ctx, res, "waiting for the calls in flight", err.Error()))
		}
	}
	return s.compensate(ctx, req, res, steps)
}

// rollbackWaitReadsLedgerVersion marks sessions whose rollback waits for
// the calls in flight by reading the ledger, so no call has to signal its
// session (ADR 8); histories recorded before it waited for call-recorded
// signals.
const rollbackWaitReadsLedgerVersion = "rollback-wait-reads-ledger"

// awaitInFlight waits, bounded, for the steps whose effects were in flight
// when the rollback listed them. An effect still unsettled at the bound
// is not an error: its compensation holds it, and halts the session.
func (s *session) awaitInFlight(ctx workflow.Context, steps []UndoStep) error {
	wait := s.in.RollbackWait
	if wait <= 0 {
		wait = DefaultRollbackWait
	}
	if workflow.GetVersion(ctx, rollbackWaitReadsLedgerVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		if s.settled(steps) {
			return nil
		}
		_, err := workflow.AwaitWithTimeout(ctx, wait, func() bool { return s.settled(steps) })
		return err
	}
	var keys []string
	for _, st := range steps {
		if st.Unsettled {
			keys = append(keys, st.OperationKey)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	wctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: wait + ActivityTimeout,
		HeartbeatTimeout:    AwaitSettledHeartbeat,
		RetryPolicy:         ActivityRetry,
	})
	return workflow.ExecuteActivity(wctx, ActivityAwaitSettled, AwaitSettledInput{Keys: keys, Until: workflow.Now(ctx).Add(wait)}).Get(ctx, nil)
}

// AwaitSettledHeartbeat is how soon a worker lost while a rollback waits
// is noticed.
const AwaitSettledHeartbeat = 10 * time.Second

// settled reports whether every step whose effect was in flight when the
// rollback listed it has had its call's outcome signalled since, for
// sessions from before the rollback read the ledger.
func (s *session) settled(steps []UndoStep) bool {
	for _, st := range steps {
		if st.Unsettled && !s.callSettled(st.OperationKey) {
			return false
		}
	}
	return true
}

func (s *session) callSettled(operationKey string) bool {
	for _, c := range s.view.Calls {
		if c.OperationKey == operationKey && c.State.Terminal() {
			return true
		}
	}
	return false
}

// compensate runs steps in order. A money-class step first opens an
// approval request; the rest of the rollback then waits for the decision in
// a coroutine, and the caller is answered at once with that step awaiting
// approval rather than held for as long as a human takes.
func (s *session) compensate(ctx workflow.Context, req RollbackRequest, res RollbackResult, steps []UndoStep) RollbackResult {
	for i, step := range steps {
		if step.NeedsApproval && workflow.GetVersion(ctx, compensationApprovalVersion, workflow.DefaultVersion, 1) == 1 {
			var gate CompensationApproval
			err := workflow.ExecuteActivity(ctx, ActivityCompensationApproval,
				CompensationApprovalInput{Step: step, AgentID: s.in.AgentID, Actor: req.Actor, Reason: req.Reason}).Get(ctx, &gate)
			if err != nil {
				res.Steps = append(res.Steps, UndoOutcome{UndoStep: step, Status: UndoFailed, Summary: err.Error()})
				return s.finishRollback(ctx, s.halt(ctx, res, step.UndoID+": "+step.Tool, err.Error()))
			}
			if gate.ApprovalID != "" {
				step.ApprovalID = gate.ApprovalID
				pending := res
				pending.Steps = append(append([]UndoOutcome(nil), res.Steps...), UndoOutcome{UndoStep: step, Status: UndoAwaitingApproval,
					Summary: step.Tool + " moves money: it waits for a human approval (request " + gate.ApprovalID + ") before it runs"})
				pending.Pending = true
				rest := steps[i+1:]
				workflow.Go(s.root, func(ctx workflow.Context) {
					out := s.awaitCompensation(ctx, step, gate)
					res.Steps = append(res.Steps, out)
					if out.Status == UndoFailed {
						s.finishRollback(ctx, s.halt(ctx, res, step.UndoID+": "+step.Tool, out.Summary))
						return
					}
					s.compensate(ctx, req, res, rest)
				})
				return pending
			}
		}
		var out UndoOutcome
		if err := workflow.ExecuteActivity(ctx, ActivityCompensate, step).Get(ctx, &out); err != nil {
			out = UndoOutcome{UndoStep: step, Status: UndoFailed, Summary: err.Error()}
		}
		res.Steps = append(res.Steps, out)
		// A pending step's effect is still unsettled after the wait:
		// undoing it blindly could undo nothing or the wrong thing.
		if out.Status == UndoFailed || out.Status == UndoPending {
			return s.finishRollback(ctx, s.halt(ctx, res, step.UndoID+": "+step.Tool, out.Summary))
		}
	}
	s.view.Rollbacks = append(s.view.Rollbacks, res)
	return s.finishRollback(ctx, res)
}

// finishRollback opens the session again, unless the rollback halted it:
// the halt, which refuses calls, replaced the rollback's hold in the
// ledger.
func (s *session) finishRollback(ctx workflow.Context, res RollbackResult) RollbackResult {
	if s.closed && !res.Halted {
		// Retried until it lands: a session left closed refuses every
		// write.
		_ = workflow.ExecuteActivity(ctx, ActivitySessionRollbackEnd, s.in.SessionID).Get(ctx, nil)
	}
	s.closed = false
	s.busy = false
	s.running = nil
	return res
}

// awaitCompensation waits for the decision on a compensation's approval
// request, then lets the compensation activity read it from the ledger and
// act on it; a signal only wakes it. The timeout closes a request nobody
// decided, which halts the session at this step.
func (s *session) awaitCompensation(ctx workflow.Context, step UndoStep, gate CompensationApproval) UndoOutcome {
	s.awaiting = true
	defer func() { s.awaiting = false }()
	signals := workflow.GetSignalChannel(ctx, SignalApprovalDecided)
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	defer cancelTimer()
	timer := workflow.NewTimer(timerCtx, gate.Timeout)
	for {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) {
			var d ApprovalDecision
			c.Receive(ctx, &d)
		})
		if !step.ApprovalExpired {
			sel.AddFuture(timer, func(workflow.Future) { step.ApprovalExpired = true })
		}
		sel.Select(ctx)
		var out UndoOutcome
		if err := workflow.ExecuteActivity(ctx, ActivityCompensate, step).Get(ctx, &out); err != nil {
			return UndoOutcome{UndoStep: step, Status: UndoFailed, Summary: err.Error()}
		}
		if out.Status != UndoAwaitingApproval {
			return out
		}
	}
}

func (s *session) halt(ctx workflow.Context, res RollbackResult, step, reason string) RollbackResult {
	res.Halted, res.FailedStep = true, step
	s.view.State, s.view.HaltStep, s.view.HaltReason = mt.SessionHalted, step, reason
	// Recording the halt in the ledger is what stops admission; retry it
	// until it lands.
	_ = workflow.ExecuteActivity(ctx, ActivitySessionHalt, HaltInput{SessionID: s.in.SessionID, Step: step, Reason: reason}).Get(ctx, nil)
	s.view.Rollbacks = append(s.view.Rollbacks, res)
	return res
}

// startPostCall hands the call's deferred work to a post-call workflow that
// outlives the session. Its ID is derived from the session, so a second
// start can only find the first.
func (s *session) startPostCall(ctx workflow.Context) error {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            PostCallWorkflowID(s.in.SessionID),
		ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	})
	child := workflow.ExecuteChildWorkflow(cctx, PostCallWorkflowName, PostCallInput{
		SessionID:     s.in.SessionID,
		AgentID:       s.in.AgentID,
		Transcript:    s.ended.Transcript,
		TranscriptRef: s.ended.TranscriptRef,
	})
	var started workflow.Execution
	err := child.GetChildWorkflowExecution().Get(ctx, &started)
	var already *temporal.ChildWorkflowExecutionAlreadyStartedError
	if err != nil && !errors.As(err, &already) {
		return fmt.Errorf("error starting the post-call workflow: %w", err)
	}
	return nil
}

// snapshot is the view with the derived awaiting_approval state.
func (s *session) snapshot() SessionView {
	v := s.view
	v.Calls = append([]CallRecord(nil), s.view.Calls...)
	if v.State == mt.SessionActive && s.awaiting {
		v.State = mt.SessionAwaitingApproval
	}
	if v.State == mt.SessionActive && s.closed {
		v.State = mt.SessionRollingBack
	}
	if v.State == mt.SessionActive {
		for _, c := range v.Calls {
			if c.State == mt.InvocationAwaitingApproval {
				v.State = mt.SessionAwaitingApproval
				break
			}
		}
	}
	return v
}
