package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// notifyLedger stands in for the request and the channels: plans answer
// from whether the request is decided, and sends are recorded with the
// workflow clock's time.
type notifyLedger struct {
	mu       sync.Mutex
	opened   time.Time
	decided  bool
	failing  map[string]bool
	sent     []NotifySendInput
	failed   []NotifyFailedInput
	escalate time.Duration
}

func (l *notifyLedger) plan(_ context.Context, in NotifyPlanInput) (NotifyPlan, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.decided {
		return NotifyPlan{}, nil
	}
	switch in.Stage {
	case StageOpened:
		return NotifyPlan{Pending: true, Recipients: []string{"operator:mgr:sms:0", "operator:mgr:email:0"}, EscalateAt: l.opened.Add(l.escalate)}, nil
	default:
		return NotifyPlan{Pending: true, Recipients: []string{"operator:lead:sms:0"}}, nil
	}
}

func (l *notifyLedger) send(_ context.Context, in NotifySendInput) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failing[in.Recipient] {
		return temporal.NewNonRetryableApplicationError("twilio rejected: not a mobile number", "NotifyFailed", nil)
	}
	l.sent = append(l.sent, in)
	return nil
}

func (l *notifyLedger) recordFailed(_ context.Context, in NotifyFailedInput) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed = append(l.failed, in)
	return nil
}

func (l *notifyLedger) stages() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]string{}
	for _, s := range l.sent {
		out[s.Stage] = append(out[s.Stage], s.Recipient)
	}
	return out
}

func notifyEnv(t *testing.T, l *notifyLedger) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	l.opened = env.Now()
	env.RegisterWorkflowWithOptions(NotifyWorkflow, workflowOptions(NotifyWorkflowName))
	env.RegisterActivityWithOptions(l.plan, activity.RegisterOptions{Name: ActivityNotifyPlan})
	env.RegisterActivityWithOptions(l.send, activity.RegisterOptions{Name: ActivityNotify})
	env.RegisterActivityWithOptions(l.recordFailed, activity.RegisterOptions{Name: ActivityNotifyFailed})
	return env
}

func TestNotifyEscalatesAStillPendingRequestAtItsTime(t *testing.T) {
	t.Parallel()
	l := &notifyLedger{escalate: 5 * time.Minute}
	env := notifyEnv(t, l)
	var beforeTime map[string][]string
	env.RegisterDelayedCallback(func() { beforeTime = l.stages() }, 5*time.Minute-time.Second)

	env.ExecuteWorkflow(NotifyWorkflowName, NotifyInput{ApprovalID: "apr_1"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	// The recipients are told in parallel, so in no fixed order.
	require.ElementsMatch(t, []string{"operator:mgr:sms:0", "operator:mgr:email:0"}, beforeTime[StageOpened])
	require.Empty(t, beforeTime[StageEscalated], "escalated before its time")
	got := l.stages()
	require.Equal(t, []string{"operator:lead:sms:0"}, got[StageEscalated])
	require.Len(t, got[StageOpened], 2, "the opened list is told once")
	require.False(t, env.Now().Before(l.opened.Add(5*time.Minute)))
}

func TestNotifyDoesNotEscalateADecidedRequest(t *testing.T) {
	t.Parallel()
	l := &notifyLedger{escalate: 5 * time.Minute}
	env := notifyEnv(t, l)
	env.RegisterDelayedCallback(func() {
		l.mu.Lock()
		l.decided = true
		l.mu.Unlock()
	}, 2*time.Minute)

	env.ExecuteWorkflow(NotifyWorkflowName, NotifyInput{ApprovalID: "apr_1"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	got := l.stages()
	require.Len(t, got[StageOpened], 2)
	require.Empty(t, got[StageEscalated])
}

func TestNotifyRecordsAFailedChannelAndTellsTheRest(t *testing.T) {
	t.Parallel()
	l := &notifyLedger{failing: map[string]bool{"operator:mgr:sms:0": true}}
	env := notifyEnv(t, l)

	env.ExecuteWorkflow(NotifyWorkflowName, NotifyInput{ApprovalID: "apr_1"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "a failed notification does not fail the workflow")
	require.Equal(t, []string{"operator:mgr:email:0"}, l.stages()[StageOpened])
	require.Len(t, l.failed, 1)
	require.Equal(t, "operator:mgr:sms:0", l.failed[0].Recipient)
	require.Contains(t, l.failed[0].Cause, "not a mobile number")
}

func TestNotifyTellsNobodyAboutARequestAlreadyDecided(t *testing.T) {
	t.Parallel()
	l := &notifyLedger{decided: true, escalate: time.Minute}
	env := notifyEnv(t, l)
	env.ExecuteWorkflow(NotifyWorkflowName, NotifyInput{ApprovalID: "apr_1"})
	require.NoError(t, env.GetWorkflowError())
	require.Empty(t, l.stages())
}

func TestInvocationStartsNotifyingOnlyWhenTheRoleHasChannels(t *testing.T) {
	t.Parallel()
	for _, notify := range []bool{true, false} {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		env.RegisterWorkflowWithOptions(InvocationWorkflow, workflowOptions(InvocationWorkflowName))
		started := false
		env.RegisterWorkflowWithOptions(func(_ workflow.Context, in NotifyInput) error {
			started = in.ApprovalID == "apr_1"
			return nil
		}, workflowOptions(NotifyWorkflowName))
		env.RegisterActivityWithOptions(func(context.Context, ExecuteInput) (InvocationResult, error) {
			return InvocationResult{State: "rejected"}, nil
		}, activity.RegisterOptions{Name: ActivityExecute})
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(SignalApprovalDecided, ApprovalDecision{ApprovalID: "apr_1"})
		}, time.Minute)
		in := input("gated")
		in.Notify = notify
		env.ExecuteWorkflow(InvocationWorkflowName, in)
		require.NoError(t, env.GetWorkflowError())
		require.Equal(t, notify, started)
	}
}

func workflowOptions(name string) workflow.RegisterOptions {
	return workflow.RegisterOptions{Name: name}
}
