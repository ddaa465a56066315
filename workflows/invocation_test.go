package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	mt "github.com/maestro-run/maestro/maestrotype"
)

type invocationSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env *testsuite.TestWorkflowEnvironment
}

func TestInvocationWorkflow(t *testing.T) {
	suite.Run(t, new(invocationSuite))
}

// The activities are stand-ins registered under the real names; the
// workflow under test only sees their results.
func executeStub(context.Context, ExecuteInput) (InvocationResult, error) {
	return InvocationResult{}, nil
}

func finalizeStub(context.Context, FinalizeInput) (InvocationResult, error) {
	return InvocationResult{}, nil
}

func (s *invocationSuite) SetupTest() {
	s.env = s.NewTestWorkflowEnvironment()
	s.env.RegisterActivityWithOptions(executeStub, activity.RegisterOptions{Name: ActivityExecute})
	s.env.RegisterActivityWithOptions(executeStub, activity.RegisterOptions{Name: ActivityRecordDeferred})
	s.env.RegisterActivityWithOptions(finalizeStub, activity.RegisterOptions{Name: ActivityFinalize})
}

func (s *invocationSuite) AfterTest(_, _ string) {
	s.env.AssertExpectations(s.T())
}

func input(route mt.Route) InvocationInput {
	return InvocationInput{
		InvocationID:    "inv_1",
		OperationKey:    "call-1:op",
		SessionID:       "call-1",
		Tool:            "some_tool",
		Route:           route,
		Args:            []byte(`{}`),
		ArgsHash:        "h",
		ApprovalID:      "apr_1",
		ApprovalTimeout: 10 * time.Minute,
		Revision:        InvocationRevision,
	}
}

func result(state mt.InvocationState) InvocationResult {
	return InvocationResult{State: state, Observation: mt.Observation{Status: mt.StatusSuccess, Summary: string(state)}}
}

func (s *invocationSuite) TestReadRunsExecuteOnce() {
	s.env.OnActivity(ActivityExecute, mock.Anything, mock.MatchedBy(func(in ExecuteInput) bool {
		return in.Route == mt.RouteRead && !in.ApprovalExpired
	})).Return(result(mt.InvocationSucceeded), nil).Once()

	s.env.ExecuteWorkflow(InvocationWorkflow, input(mt.RouteRead))

	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
	var got InvocationResult
	s.NoError(s.env.GetWorkflowResult(&got))
	s.Equal(mt.InvocationSucceeded, got.State)
}

func (s *invocationSuite) TestDeferredOnlyRecords() {
	s.env.OnActivity(ActivityRecordDeferred, mock.Anything, mock.Anything).Return(result(mt.InvocationRecorded), nil).Once()

	s.env.ExecuteWorkflow(InvocationWorkflow, input(mt.RouteDeferred))

	s.NoError(s.env.GetWorkflowError())
	var got InvocationResult
	s.NoError(s.env.GetWorkflowResult(&got))
	s.Equal(mt.InvocationRecorded, got.State)
}

func (s *invocationSuite) TestGatedWaitsForSignalAndIgnoresStrayWakeUps() {
	calls := 0
	s.env.OnActivity(ActivityExecute, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in ExecuteInput) (InvocationResult, error) {
			calls++
			s.False(in.ApprovalExpired, "the timer has not fired")
			if calls == 1 {
				// A signal arrived but the ledger still says pending.
				return InvocationResult{State: mt.InvocationAwaitingApproval}, nil
			}
			return result(mt.InvocationSucceeded), nil
		}).Twice()
	s.env.RegisterDelayedCallback(func() {
		s.Equal(mt.InvocationAwaitingApproval, s.queryState())
		s.env.SignalWorkflow(SignalApprovalDecided, ApprovalDecision{ApprovalID: "apr_1"})
	}, time.Minute)
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(SignalApprovalDecided, ApprovalDecision{ApprovalID: "apr_1"})
	}, 2*time.Minute)

	s.env.ExecuteWorkflow(InvocationWorkflow, input(mt.RouteGated))

	s.NoError(s.env.GetWorkflowError())
	var got InvocationResult
	s.NoError(s.env.GetWorkflowResult(&got))
	s.Equal(mt.InvocationSucceeded, got.State)
	s.Equal(2, calls)
}

func (s *invocationSuite) TestGatedTimesOutIntoExecuteWithExpiredFlag() {
	s.env.OnActivity(ActivityExecute, mock.Anything, mock.MatchedBy(func(in ExecuteInput) bool {
		return in.ApprovalExpired && in.ApprovalID == "apr_1"
	})).Return(result(mt.InvocationTimedOut), nil).Once()

	start := s.env.Now()
	s.env.ExecuteWorkflow(InvocationWorkflow, input(mt.RouteGated))

	s.NoError(s.env.GetWorkflowError())
	var got InvocationResult
	s.NoError(s.env.GetWorkflowResult(&got))
	s.Equal(mt.InvocationTimedOut, got.State)
	s.GreaterOrEqual(s.env.Now().Sub(start), 10*time.Minute, "nothing runs before the policy timeout")
}

func (s *invocationSuite) TestPreApprovedRunsAtOnce() {
	s.env.OnActivity(ActivityExecute, mock.Anything, mock.Anything).Return(result(mt.InvocationSucceeded), nil).Once()
	in := input(mt.RouteGated)
	in.PreApproved = true
	timers := s.countTimers()

	start := s.env.Now()
	s.env.ExecuteWorkflow(InvocationWorkflow, in)

	s.NoError(s.env.GetWorkflowError())
	s.Less(s.env.Now().Sub(start), time.Minute)
	s.Equal(0, *timers, "a call that never waits starts no approval timer")
}

func (s *invocationSuite) TestADecidedCallLeavesItsTimerToTheWorkflowsEnd() {
	s.env.OnActivity(ActivityExecute, mock.Anything, mock.Anything).Return(result(mt.InvocationSucceeded), nil).Once()
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(SignalApprovalDecided, ApprovalDecision{ApprovalID: "apr_1"})
	}, time.Minute)
	timers := s.countTimers()

	s.env.ExecuteWorkflow(InvocationWorkflow, input(mt.RouteGated))

	s.NoError(s.env.GetWorkflowError())
	s.Equal(1, *timers, "one timer guards the wait")
}

func (s *invocationSuite) TestAnInvocationStartedBeforeTheRevisionKeepsItsShape() {
	s.env.OnActivity(ActivityExecute, mock.Anything, mock.Anything).Return(result(mt.InvocationSucceeded), nil).Once()
	in := input(mt.RouteGated)
	in.PreApproved, in.Revision = true, 0
	timers := s.countTimers()

	s.env.ExecuteWorkflow(InvocationWorkflow, in)

	s.NoError(s.env.GetWorkflowError())
	s.Equal(1, *timers, "the timer it recorded, started at once though nothing waits")
}

// countTimers counts the timers the workflow starts. Whether one is
// cancelled shows in recorded histories (testdata), not in this
// environment, which does not report a timer cancelled as its workflow
// completes.
func (s *invocationSuite) countTimers() *int {
	var n int
	s.env.SetOnTimerScheduledListener(func(string, time.Duration) { n++ })
	return &n
}

func (s *invocationSuite) TestUnknownRouteFailsWithoutRunningAnything() {
	s.env.ExecuteWorkflow(InvocationWorkflow, input("teleport"))

	err := s.env.GetWorkflowError()
	s.Require().Error(err)
	s.Contains(err.Error(), ErrTypeUnknownRoute)
}

func (s *invocationSuite) TestAnErrorItCannotRecoverFromIsFinalizedInTheLedger() {
	broken := temporal.NewNonRetryableApplicationError("settled effect call-1:op has no stored result", ErrTypeInvariant, nil)
	s.env.OnActivity(ActivityExecute, mock.Anything, mock.Anything).Return(InvocationResult{}, broken).Once()
	failed := InvocationResult{State: mt.InvocationFailed, Observation: mt.Observation{Status: mt.StatusError, Summary: "finalized"}}
	s.env.OnActivity(ActivityFinalize, mock.Anything, mock.MatchedBy(func(in FinalizeInput) bool {
		return in.Execute.InvocationID == "inv_1" && in.Execute.OperationKey == "call-1:op" &&
			strings.Contains(in.Cause, "has no stored result")
	})).Return(failed, nil).Once()

	s.env.ExecuteWorkflow(InvocationWorkflow, input(mt.RouteWrite))

	s.Require().NoError(s.env.GetWorkflowError())
	var got InvocationResult
	s.Require().NoError(s.env.GetWorkflowResult(&got))
	s.Equal(mt.InvocationFailed, got.State)
	s.Equal(mt.InvocationFailed, s.queryState())
}

func (s *invocationSuite) TestRetriesExhaustedOnAGatedCallAreFinalized() {
	lost := temporal.NewApplicationError("error settling effect: connection refused", "Ledger")
	s.env.OnActivity(ActivityExecute, mock.Anything, mock.Anything).Return(InvocationResult{}, lost).Times(int(ActivityRetry.MaximumAttempts))
	held := InvocationResult{State: mt.InvocationNeedsReconciliation}
	s.env.OnActivity(ActivityFinalize, mock.Anything, mock.Anything).Return(held, nil).Once()

	in := input(mt.RouteGated)
	in.PreApproved = true
	s.env.ExecuteWorkflow(InvocationWorkflow, in)

	s.Require().NoError(s.env.GetWorkflowError())
	var got InvocationResult
	s.Require().NoError(s.env.GetWorkflowResult(&got))
	s.Equal(mt.InvocationNeedsReconciliation, got.State)
}

func (s *invocationSuite) TestAFailedFinalizeLeavesTheOriginalError() {
	broken := temporal.NewNonRetryableApplicationError("tool gone", ErrTypeInvariant, nil)
	s.env.OnActivity(ActivityExecute, mock.Anything, mock.Anything).Return(InvocationResult{}, broken).Once()
	s.env.OnActivity(ActivityFinalize, mock.Anything, mock.Anything).
		Return(InvocationResult{}, temporal.NewNonRetryableApplicationError("ledger down", "Ledger", nil)).Once()

	s.env.ExecuteWorkflow(InvocationWorkflow, input(mt.RouteWrite))

	err := s.env.GetWorkflowError()
	s.Require().Error(err)
	s.Contains(err.Error(), "tool gone")
}

func (s *invocationSuite) queryState() mt.InvocationState {
	v, err := s.env.QueryWorkflow(QueryState)
	s.Require().NoError(err)
	var st mt.InvocationState
	s.Require().NoError(v.Get(&st))
	return st
}

func TestInvocationWorkflowIDIsDerivedFromTheKey(t *testing.T) {
	t.Parallel()
	require.Equal(t, "invocation/call-1:op", InvocationWorkflowID("call-1:op"))
}
