package workflows

import (
	"context"
	"time"

	"github.com/stretchr/testify/mock"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// inFlight is the sequence a caller's "never mind" makes: a work order
// still being created (its effect in progress) above an older one.
var inFlight = []UndoStep{
	{UndoID: "undo_b", Tool: "cancel_work_order", OperationKey: "wo-slow", Seq: 2, Unsettled: true},
	{UndoID: "undo_a", Tool: "cancel_work_order", OperationKey: "wo-done", Seq: 1},
}

// settlesAfter has the rollback's wait for the effect in flight under
// key end after d, as the ledger would show it settled then.
func (s *sessionSuite) settlesAfter(key string, d time.Duration) {
	s.env.OnActivity(ActivityAwaitSettled, mock.Anything, mock.MatchedBy(func(in AwaitSettledInput) bool {
		return len(in.Keys) == 1 && in.Keys[0] == key
	})).After(d).Return(nil).Once()
}

// mark records the ledger steps of a rollback in the order they ran.
func (s *sessionSuite) mark(name string) func(context.Context, string) error {
	return func(context.Context, string) error {
		s.ran = append(s.ran, name)
		return nil
	}
}

// expectRollbackOfInFlight expects one rollback of inFlight whose call in
// flight settles 1m6s after start.
func (s *sessionSuite) expectRollbackOfInFlight(start time.Time) {
	s.env.OnActivity(ActivitySessionRollbackBegin, mock.Anything, "s1").Return(s.mark("begin")).Once()
	s.env.OnActivity(ActivityUndoList, mock.Anything, "s1").Return(inFlight, nil).Once()
	s.env.OnActivity(ActivityCompensate, mock.Anything, mock.Anything).Return(s.compensateAt(start.Add(time.Minute+6*time.Second), "undo_b")).Twice()
	s.env.OnActivity(ActivitySessionRollbackEnd, mock.Anything, "s1").Return(s.mark("end")).Once()
}

func (s *sessionSuite) compensateAt(settledAt time.Time, unsettled string) func(context.Context, UndoStep) (UndoOutcome, error) {
	return func(_ context.Context, st UndoStep) (UndoOutcome, error) {
		s.ran = append(s.ran, st.UndoID)
		if st.UndoID == unsettled && s.env.Now().Before(settledAt) {
			return UndoOutcome{UndoStep: st, Status: UndoPending, Summary: "the outcome of " + st.OperationKey + " is still unknown"}, nil
		}
		return UndoOutcome{UndoStep: st, Status: UndoCompensated}, nil
	}
}

func (s *sessionSuite) TestRollbackWaitsForTheCallInFlightThenUndoesIt() {
	start := s.env.Now()
	s.expectRollbackOfInFlight(start)
	s.settlesAfter("wo-slow", 6*time.Second)

	s.update(UpdateRollback, RollbackRequest{Actor: "agent:a", Reason: "never mind"}, time.Minute, func(v any, err error) {
		s.NoError(err)
		res := v.(RollbackResult)
		s.False(res.Halted, "%+v", res)
		s.Len(res.Steps, 2)
		s.Equal(UndoCompensated, res.Steps[0].Status, "what settled during the wait is undone, newest first")
		s.GreaterOrEqual(s.env.Now().Sub(start), time.Minute+6*time.Second, "the rollback waited for the call")
		s.Less(s.env.Now().Sub(start), time.Minute+DefaultRollbackWait, "and no longer than it took")
	})
	s.env.RegisterDelayedCallback(func() {
		s.Equal(mt.SessionRollingBack, s.view().State)
		s.Equal([]string{"begin"}, s.ran, "the session closed before the wait, and nothing ran yet")
	}, time.Minute+3*time.Second)
	s.env.RegisterDelayedCallback(func() { s.Equal(mt.SessionActive, s.view().State) }, 2*time.Minute)
	s.endCall(3 * time.Minute)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1"})

	s.NoError(s.env.GetWorkflowError())
	s.Equal([]string{"begin", "undo_b", "undo_a", "end"}, s.ran)
}

func (s *sessionSuite) TestUnsettledAfterTheWaitHaltsAndARetryUndoesIt() {
	start := s.env.Now()
	wait := 10 * time.Second
	s.env.OnActivity(ActivitySessionRollbackBegin, mock.Anything, "s1").Return(s.mark("begin")).Twice()
	s.env.OnActivity(ActivityUndoList, mock.Anything, "s1").Return(inFlight, nil).Once()
	s.env.OnActivity(ActivityUndoList, mock.Anything, "s1").Return(inFlight[:1], nil).Once()
	s.env.OnActivity(ActivityCompensate, mock.Anything, mock.Anything).Return(s.compensateAt(start.Add(2*time.Minute), "undo_b")).Twice()
	s.env.OnActivity(ActivitySessionHalt, mock.Anything, mock.MatchedBy(func(h HaltInput) bool {
		return h.Step == "undo_b: cancel_work_order"
	})).Return(nil).Once()
	s.env.OnActivity(ActivitySessionResolve, mock.Anything, mock.MatchedBy(func(r ResolveRequest) bool { return r.Retry }), "s1").Return(nil).Once()
	s.env.OnActivity(ActivitySessionRollbackEnd, mock.Anything, "s1").Return(s.mark("end")).Once()
	// Still in flight at the bound, then settled before the retry.
	s.settlesAfter("wo-slow", wait)
	s.settlesAfter("wo-slow", 0)

	s.update(UpdateRollback, RollbackRequest{Actor: "agent:a"}, time.Minute, func(v any, err error) {
		s.NoError(err)
		res := v.(RollbackResult)
		s.True(res.Halted)
		s.Equal("undo_b: cancel_work_order", res.FailedStep, "the halt names the unsettled effect's step")
		s.Equal(UndoPending, res.Steps[0].Status)
		s.Equal(time.Minute+wait, s.env.Now().Sub(start), "it waited the configured bound")
	})
	s.env.RegisterDelayedCallback(func() { s.Equal(mt.SessionHalted, s.view().State) }, 90*time.Second)
	s.update(UpdateResolve, ResolveRequest{Actor: "operator:ops", Reason: "the work order came through", Retry: true}, 3*time.Minute, func(v any, err error) {
		s.NoError(err)
		view := v.(SessionView)
		s.Equal(mt.SessionActive, view.State)
		s.Len(view.Rollbacks, 2)
		s.False(view.Rollbacks[1].Halted)
		s.Equal(UndoCompensated, view.Rollbacks[1].Steps[0].Status)
	})
	s.endCall(4 * time.Minute)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1", RollbackWait: wait})

	s.NoError(s.env.GetWorkflowError())
	s.Equal([]string{"begin", "undo_b", "begin", "undo_b", "end"}, s.ran, "nothing after the unsettled step; the retry runs it once")
}

func (s *sessionSuite) TestARollbackAskedAgainWhileItRunsJoinsIt() {
	start := s.env.Now()
	s.expectRollbackOfInFlight(start)

	var answers []RollbackResult
	collect := func(v any, err error) {
		s.NoError(err)
		if err == nil {
			answers = append(answers, v.(RollbackResult))
		}
	}
	s.settlesAfter("wo-slow", 6*time.Second)
	s.update(UpdateRollback, RollbackRequest{Actor: "agent:a", Reason: "never mind"}, time.Minute, collect)
	// The agent's connection dropped while the saga waited; it asks again.
	s.update(UpdateRollback, RollbackRequest{Actor: "agent:a", Reason: "never mind"}, time.Minute+3*time.Second, collect)
	s.endCall(3 * time.Minute)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1"})

	s.NoError(s.env.GetWorkflowError())
	s.Require().Len(answers, 2, "both requests answered")
	s.Equal(answers[0], answers[1], "the repeated request gets the running rollback's answer")
	s.False(answers[0].Halted)
	s.Equal([]string{"begin", "undo_b", "undo_a", "end"}, s.ran, "the saga ran once")
}

func (s *sessionSuite) TestARollbackAfterTheLastOneFinishedRunsAgain() {
	s.env.OnActivity(ActivitySessionRollbackBegin, mock.Anything, "s1").Return(s.mark("begin")).Twice()
	s.env.OnActivity(ActivityUndoList, mock.Anything, "s1").Return(inFlight[1:], nil).Once()
	s.env.OnActivity(ActivityUndoList, mock.Anything, "s1").Return([]UndoStep{}, nil).Once()
	s.env.OnActivity(ActivityCompensate, mock.Anything, mock.Anything).Return(s.compensateAt(s.env.Now(), "")).Once()
	s.env.OnActivity(ActivitySessionRollbackEnd, mock.Anything, "s1").Return(s.mark("end")).Twice()

	var steps []int
	collect := func(v any, err error) {
		s.NoError(err)
		if err == nil {
			steps = append(steps, len(v.(RollbackResult).Steps))
		}
	}
	s.update(UpdateRollback, RollbackRequest{Actor: "agent:a"}, time.Minute, collect)
	s.update(UpdateRollback, RollbackRequest{Actor: "agent:a"}, 2*time.Minute, collect)
	s.endCall(3 * time.Minute)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1"})

	s.NoError(s.env.GetWorkflowError())
	s.Equal([]int{1, 0}, steps, "the second rollback finds nothing left to undo")
	s.Equal([]string{"begin", "undo_a", "end", "begin", "end"}, s.ran)
}
