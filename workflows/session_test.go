package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	mt "github.com/maestro-run/maestro/maestrotype"
)

type sessionSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env *testsuite.TestWorkflowEnvironment
	// ran is the order compensations ran in.
	ran []string
}

func TestSessionWorkflow(t *testing.T) {
	suite.Run(t, new(sessionSuite))
}

func undoListStub(context.Context, string) ([]UndoStep, error)      { return nil, nil }
func compensateStub(context.Context, UndoStep) (UndoOutcome, error) { return UndoOutcome{}, nil }
func haltStub(context.Context, HaltInput) error                     { return nil }
func resolveStub(context.Context, ResolveRequest, string) error     { return nil }
func endStub(context.Context, string) error                         { return nil }
func rollbackMarkStub(context.Context, string) error                { return nil }
func awaitSettledStub(context.Context, AwaitSettledInput) error     { return nil }
func postCallStub(workflow.Context, PostCallInput) (PostCallResult, error) {
	return PostCallResult{}, nil
}

func (s *sessionSuite) SetupTest() {
	s.ran = nil
	s.env = s.NewTestWorkflowEnvironment()
	for name, fn := range map[string]any{
		ActivityUndoList: undoListStub, ActivityCompensate: compensateStub, ActivitySessionHalt: haltStub,
		ActivitySessionResolve: resolveStub, ActivitySessionEnd: endStub,
		ActivitySessionRollbackBegin: rollbackMarkStub, ActivitySessionRollbackEnd: rollbackMarkStub,
		ActivityAwaitSettled: awaitSettledStub,
	} {
		s.env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	s.env.RegisterWorkflowWithOptions(postCallStub, workflow.RegisterOptions{Name: PostCallWorkflowName})
}

func (s *sessionSuite) AfterTest(_, _ string) { s.env.AssertExpectations(s.T()) }

var threeSteps = []UndoStep{ // newest first, as the ledger lists them
	{UndoID: "undo_c", Tool: "cancel_refund", Seq: 3},
	{UndoID: "undo_b", Tool: "cancel_work_order", Seq: 2},
	{UndoID: "undo_a", Tool: "cancel_work_order", Seq: 1},
}

// compensate records the order and fails the step named failing.
func (s *sessionSuite) compensate(failing string) func(context.Context, UndoStep) (UndoOutcome, error) {
	return func(_ context.Context, st UndoStep) (UndoOutcome, error) {
		s.ran = append(s.ran, st.UndoID)
		if st.UndoID == failing {
			return UndoOutcome{UndoStep: st, Status: UndoFailed, Summary: "provider refused the cancel"}, nil
		}
		return UndoOutcome{UndoStep: st, Status: UndoCompensated}, nil
	}
}

func (s *sessionSuite) update(name string, arg any, after time.Duration, check func(any, error)) {
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { check(nil, err) },
			OnAccept:   func() {},
			OnComplete: func(v any, err error) { check(v, err) },
		}, arg)
	}, after)
}

func (s *sessionSuite) endCall(after time.Duration) {
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(SignalCallEnded, CallEnded{Transcript: mt.Transcript{Turns: []mt.Turn{{Speaker: "caller", Text: "bye"}}}})
	}, after)
}

func (s *sessionSuite) view() SessionView {
	v, err := s.env.QueryWorkflow(QuerySession)
	s.Require().NoError(err)
	var out SessionView
	s.Require().NoError(v.Get(&out))
	return out
}

func (s *sessionSuite) TestRollbackRunsCompensationsLIFO() {
	s.env.OnActivity(ActivityUndoList, mock.Anything, "s1").Return(threeSteps, nil).Once()
	s.env.OnActivity(ActivityCompensate, mock.Anything, mock.Anything).Return(s.compensate("")).Times(3)
	s.update(UpdateRollback, RollbackRequest{Actor: "operator:ops"}, time.Minute, func(v any, err error) {
		s.NoError(err)
		res := v.(RollbackResult)
		s.False(res.Halted)
		s.Len(res.Steps, 3)
	})
	s.endCall(2 * time.Minute)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1"})

	s.NoError(s.env.GetWorkflowError())
	s.Equal([]string{"undo_c", "undo_b", "undo_a"}, s.ran, "newest effect undone first")
}

func (s *sessionSuite) TestFailedCompensationHaltsUntilResolved() {
	s.env.OnActivity(ActivityUndoList, mock.Anything, "s1").Return(threeSteps, nil).Once()
	s.env.OnActivity(ActivityCompensate, mock.Anything, mock.Anything).Return(s.compensate("undo_b")).Twice()
	s.env.OnActivity(ActivitySessionHalt, mock.Anything, mock.MatchedBy(func(h HaltInput) bool {
		return h.Step == "undo_b: cancel_work_order"
	})).Return(nil).Once()
	s.env.OnActivity(ActivitySessionResolve, mock.Anything, mock.Anything, "s1").Return(nil).Once()

	s.update(UpdateRollback, RollbackRequest{Actor: "operator:ops"}, time.Minute, func(v any, err error) {
		s.NoError(err)
		res := v.(RollbackResult)
		s.True(res.Halted)
		s.Equal("undo_b: cancel_work_order", res.FailedStep)
	})
	s.env.RegisterDelayedCallback(func() {
		v := s.view()
		s.Equal(mt.SessionHalted, v.State)
		s.Equal("undo_b: cancel_work_order", v.HaltStep)
	}, 90*time.Second)
	s.update(UpdateRollback, RollbackRequest{Actor: "operator:ops"}, 2*time.Minute, func(_ any, err error) {
		s.ErrorContains(err, "halted", "nothing further runs until a human resolves it")
	})
	s.update(UpdateResolve, ResolveRequest{Actor: "operator:ops"}, 3*time.Minute, func(_ any, err error) {
		s.ErrorContains(err, "reason")
	})
	s.update(UpdateResolve, ResolveRequest{Actor: "operator:ops", Reason: "cancelled by phone"}, 4*time.Minute, func(_ any, err error) {
		s.NoError(err)
	})
	s.env.RegisterDelayedCallback(func() { s.Equal(mt.SessionActive, s.view().State) }, 5*time.Minute)
	s.endCall(6 * time.Minute)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1"})

	s.NoError(s.env.GetWorkflowError())
	s.Equal([]string{"undo_c", "undo_b"}, s.ran, "nothing after the failing step")
}

func (s *sessionSuite) TestSecondRollbackCompensatesNothingTwice() {
	s.env.OnActivity(ActivityUndoList, mock.Anything, "s1").Return(threeSteps, nil).Once()
	s.env.OnActivity(ActivityUndoList, mock.Anything, "s1").Return([]UndoStep{}, nil).Once()
	s.env.OnActivity(ActivityCompensate, mock.Anything, mock.Anything).Return(s.compensate("")).Times(3)
	s.update(UpdateRollback, RollbackRequest{Actor: "a"}, time.Minute, func(any, error) {})
	s.update(UpdateRollback, RollbackRequest{Actor: "a"}, 2*time.Minute, func(v any, err error) {
		s.NoError(err)
		s.Empty(v.(RollbackResult).Steps)
	})
	s.endCall(3 * time.Minute)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1"})

	s.NoError(s.env.GetWorkflowError())
	s.Len(s.ran, 3)
}

func (s *sessionSuite) TestCallEndedTwiceStartsOnePostCall() {
	starts := 0
	s.env.OnWorkflow(PostCallWorkflowName, mock.Anything, mock.Anything).Return(
		func(workflow.Context, PostCallInput) (PostCallResult, error) { starts++; return PostCallResult{}, nil })
	s.endCall(time.Minute)
	s.endCall(time.Minute + time.Second)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1"})

	s.NoError(s.env.GetWorkflowError())
	var v SessionView
	s.NoError(s.env.GetWorkflowResult(&v))
	s.Equal(mt.SessionEnded, v.State)
	s.Equal(1, starts)
}

func (s *sessionSuite) TestCallsAreRecordedAndGateStateDerived() {
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(SignalCallRecorded, CallRecord{InvocationID: "inv_1", Tool: "issue_refund", State: mt.InvocationAwaitingApproval})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() { s.Equal(mt.SessionAwaitingApproval, s.view().State) }, 2*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(SignalCallRecorded, CallRecord{InvocationID: "inv_1", Tool: "issue_refund", State: mt.InvocationSucceeded})
	}, 3*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.view()
		s.Equal(mt.SessionActive, v.State)
		s.Len(v.Calls, 1)
	}, 4*time.Second)
	s.endCall(time.Minute)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1"})
	s.NoError(s.env.GetWorkflowError())
}

func (s *sessionSuite) TestFailurePolicyRollsBack() {
	s.env.OnActivity(ActivityUndoList, mock.Anything, "s1").Return(threeSteps[:1], nil).Once()
	s.env.OnActivity(ActivityCompensate, mock.Anything, mock.Anything).Return(s.compensate("")).Once()
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(SignalCallRecorded, CallRecord{InvocationID: "inv_2", Tool: "send_sms", State: mt.InvocationFailed})
	}, time.Second)
	s.endCall(time.Minute)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1", OnFailure: mt.OnFailureRollback})

	s.NoError(s.env.GetWorkflowError())
	s.Equal([]string{"undo_c"}, s.ran)
}

func (s *sessionSuite) TestUnendedSessionEndsAfterItsLifetime() {
	s.env.OnActivity(ActivitySessionEnd, mock.Anything, "s1").Return(nil).Once()

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1", MaxLifetime: time.Hour})

	s.NoError(s.env.GetWorkflowError())
}

func (s *sessionSuite) TestResolveClearsAHaltTheLedgerHolds() {
	s.env.OnActivity(ActivitySessionResolve, mock.Anything, mock.Anything, "s1").Return(nil).Once()
	s.update(UpdateResolve, ResolveRequest{Actor: "operator:ops", Reason: "checked"}, time.Minute, func(_ any, err error) {
		s.ErrorContains(err, "not halted", "the workflow's own view has no halt")
	})
	// A rejection halts the session in the ledger only (on_reject: halt);
	// the operator's resolution says so.
	s.update(UpdateResolve, ResolveRequest{Actor: "operator:ops", Reason: "spoke to the tenant", HaltedInLedger: true}, 2*time.Minute, func(_ any, err error) {
		s.NoError(err)
	})
	s.endCall(3 * time.Minute)

	s.env.ExecuteWorkflow(SessionWorkflow, SessionInput{SessionID: "s1"})

	s.NoError(s.env.GetWorkflowError())
}
