package workflows

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	mt "github.com/maestro-run/maestro/maestrotype"
)

func gatherStub(context.Context, PostCallInput) (mt.Gathered, error) { return mt.Gathered{}, nil }
func judgeStub(context.Context, mt.Gathered) (mt.Judged, error)      { return mt.Judged{}, nil }
func dispatchStub(context.Context, string, string, mt.WorkItem) (Delivery, error) {
	return Delivery{}, nil
}
func attemptStub(context.Context, AttemptInput) (Attempt, error) { return Attempt{}, nil }
func settledStub(context.Context, Attempt) (Attempt, error)      { return Attempt{}, nil }
func persistStub(context.Context, Delivery) error                { return nil }

// postCallEnv is a post-call workflow under test: its activities are
// stubs the test programs, and time skips.
type postCallEnv struct {
	*testsuite.TestWorkflowEnvironment
	mu        sync.Mutex
	persisted []Delivery
}

func newPostCallEnv(t *testing.T, items ...mt.WorkItem) *postCallEnv {
	t.Helper()
	var ts testsuite.WorkflowTestSuite
	env := &postCallEnv{TestWorkflowEnvironment: ts.NewTestWorkflowEnvironment()}
	for name, fn := range map[string]any{
		ActivityPostCallGather: gatherStub, ActivityPostCallJudge: judgeStub,
		ActivityPostCallDispatch: dispatchStub, ActivityPostCallPersist: persistStub,
		ActivityPostCallAttempt: attemptStub, ActivityPostCallSettled: settledStub,
	} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	if items != nil {
		env.OnActivity(ActivityPostCallGather, mock.Anything, mock.Anything).Return(mt.Gathered{SessionID: "s1"}, nil).Once()
		env.OnActivity(ActivityPostCallJudge, mock.Anything, mock.Anything).Return(mt.Judged{Items: items}, nil).Once()
	}
	env.OnActivity(ActivityPostCallPersist, mock.Anything, mock.Anything).Return(func(_ context.Context, d Delivery) error {
		env.mu.Lock()
		defer env.mu.Unlock()
		env.persisted = append(env.persisted, d)
		return nil
	}).Maybe()
	return env
}

// last is the item's last persisted state.
func (e *postCallEnv) last(t *testing.T, key string) Delivery {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := len(e.persisted) - 1; i >= 0; i-- {
		if e.persisted[i].Item.Key == key {
			return e.persisted[i]
		}
	}
	t.Fatalf("item %s was never persisted", key)
	return Delivery{}
}

// answer is an attempt's outcome, as the attempt activity reports it.
func answer(in AttemptInput, at time.Time, o AttemptOutcome, summary string) Attempt {
	a := Attempt{N: in.N, Channel: in.Channel, Tool: in.Tool, OperationKey: in.OperationKey, Outcome: o, Summary: summary, At: at}
	if o != AttemptRefused || in.Tool != "gate_refused" {
		a.InvocationID = "inv_" + in.OperationKey
	}
	if o == AttemptDelivered {
		a.Receipt = &mt.Receipt{Provider: in.Tool, ID: "r_" + in.OperationKey}
	}
	return a
}

// message is a recorded message with the demo's chain: email, then a text
// to the on-call phone, then a page.
func message(deadline time.Duration) mt.WorkItem {
	return mt.WorkItem{
		Key: "def_1", Tool: "deliver_message", DeferredID: "def_1", Source: "deferred:def_1", Deadline: deadline,
		Fallbacks: []mt.Channel{
			{Tool: "request_callback", Deadline: 2 * time.Hour},
			{Tool: "escalate_to_human", Deadline: time.Hour},
		},
	}
}

func TestPostCallGathersJudgesDispatchesAndPersistsEachItem(t *testing.T) {
	transcript := mt.Transcript{Turns: []mt.Turn{{Speaker: "caller", Text: "please call me back"}}}
	env := newPostCallEnv(t)
	env.OnActivity(ActivityPostCallGather, mock.Anything, mock.Anything).Return(mt.Gathered{SessionID: "s1", Transcript: transcript}, nil).Once()
	env.OnActivity(ActivityPostCallJudge, mock.Anything, mock.MatchedBy(func(g mt.Gathered) bool {
		return len(g.Transcript.Turns) == 1
	})).Return(mt.Judged{
		Items: []mt.WorkItem{
			{Key: "def_1", Tool: "deliver_message", DeferredID: "def_1"},
			{Key: "callback_request-0", Tool: "request_callback"},
		},
		Failures: []mt.ItemFailure{{Key: "def_2", DeferredID: "def_2", Reason: "no delivery rule"}},
	}, nil).Once()
	env.OnActivity(ActivityPostCallAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in AttemptInput) (Attempt, error) {
			if in.ItemKey == "callback_request-0" {
				return Attempt{}, temporal.NewNonRetryableApplicationError("provider down", "Test", nil)
			}
			return answer(in, time.Now(), AttemptDelivered, "sent"), nil
		})

	env.ExecuteWorkflow(PostCallWorkflow, PostCallInput{SessionID: "s1"})

	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
	require.Equal(t, mt.InvocationFailed, env.persisted[0].State, "a judged failure is persisted as failed, never done")
	require.Equal(t, "def_2", env.persisted[0].Item.DeferredID)
	got := env.last(t, "def_1")
	require.Equal(t, mt.InvocationSucceeded, got.State)
	require.Equal(t, "postcall:s1:def_1", got.OperationKey)
	failed := env.last(t, "callback_request-0")
	require.True(t, failed.Held, "an item no attempt could even be made for is held, never dropped")
	require.Contains(t, failed.Summary, "provider down")
}

// An outage of three hours is waited out: attempts that prove nothing was
// done are repeated, each under its own key, with a capped backoff, and
// the first one after the outage delivers the message.
func TestDeferredItemIsDeliveredAfterAThreeHourOutage(t *testing.T) {
	env := newPostCallEnv(t, message(24*time.Hour))
	var start time.Time
	env.OnActivity(ActivityPostCallAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in AttemptInput) (Attempt, error) {
			now := env.Now()
			if start.IsZero() {
				start = now
			}
			require.Equal(t, "deliver_message", in.Tool, "no fallback while the first channel's deadline holds")
			if now.Sub(start) < 3*time.Hour {
				return answer(in, now, AttemptUnavailable, "ses stayed unavailable after retries; nothing was done"), nil
			}
			return answer(in, now, AttemptDelivered, "deliver_message confirmed by ses"), nil
		})

	env.ExecuteWorkflow(PostCallWorkflow, PostCallInput{SessionID: "s1"})

	require.NoError(t, env.GetWorkflowError())
	var res PostCallResult
	require.NoError(t, env.GetWorkflowResult(&res))
	d := res.Deliveries[0]
	require.Equal(t, mt.InvocationSucceeded, d.State)
	require.NotNil(t, d.Receipt)
	require.Equal(t, d, env.last(t, "def_1"), "persisted as delivered")
	last := d.Attempts[len(d.Attempts)-1]
	require.GreaterOrEqual(t, last.At.Sub(start), 3*time.Hour)
	require.Less(t, last.At.Sub(start), 3*time.Hour+DefaultBackoff.Max+time.Minute, "found within one capped interval of the outage's end")
	keys := map[string]bool{}
	for i, a := range d.Attempts {
		require.False(t, keys[a.OperationKey], "attempt %d reuses %s", i, a.OperationKey)
		keys[a.OperationKey] = true
		if i > 0 {
			require.LessOrEqual(t, a.At.Sub(d.Attempts[i-1].At), DefaultBackoff.Max, "the backoff is capped")
		}
	}
	require.Equal(t, "postcall:s1:def_1", d.Attempts[0].OperationKey)
	require.Equal(t, "postcall:s1:def_1/1", d.Attempts[1].OperationKey)
	require.Less(t, len(d.Attempts), 40, "three hours cost a bounded history")
}

// A definitive refusal by SES is not retried: the text to the on-call
// phone delivers the message, under a key of its own.
func TestDeferredItemIsDeliveredBySMSWhenSESRefuses(t *testing.T) {
	env := newPostCallEnv(t, message(24*time.Hour))
	env.OnActivity(ActivityPostCallAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in AttemptInput) (Attempt, error) {
			if in.Tool == "deliver_message" {
				return answer(in, env.Now(), AttemptRefused, "ses refused the request; nothing was done"), nil
			}
			return answer(in, env.Now(), AttemptDelivered, "request_callback confirmed by twilio"), nil
		}).Twice()

	env.ExecuteWorkflow(PostCallWorkflow, PostCallInput{SessionID: "s1"})

	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
	d := env.last(t, "def_1")
	require.Equal(t, mt.InvocationSucceeded, d.State)
	require.Equal(t, "request_callback", d.Receipt.Provider)
	require.Equal(t, "postcall:s1:def_1/1", d.OperationKey)
	require.Len(t, d.Attempts, 2)
	require.Equal(t, AttemptRefused, d.Attempts[0].Outcome)
	require.Equal(t, 1, d.Attempts[1].Channel)
}

// When every channel fails (SES refuses, the on-call phone and the page
// stay unreachable past their deadlines), the item is held for a human
// with every attempt listed.
func TestDeferredItemIsHeldForAHumanWhenEveryChannelFails(t *testing.T) {
	env := newPostCallEnv(t, message(24*time.Hour))
	env.OnActivity(ActivityPostCallAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in AttemptInput) (Attempt, error) {
			if in.Tool == "deliver_message" {
				return answer(in, env.Now(), AttemptRefused, "ses refused the request; nothing was done"), nil
			}
			return answer(in, env.Now(), AttemptUnavailable, in.Tool+" unavailable; nothing was done"), nil
		})

	env.ExecuteWorkflow(PostCallWorkflow, PostCallInput{SessionID: "s1"})

	require.NoError(t, env.GetWorkflowError())
	d := env.last(t, "def_1")
	require.True(t, d.Held)
	require.False(t, d.Pending)
	require.Nil(t, d.Receipt)
	channels := map[int]int{}
	for i, a := range d.Attempts {
		channels[a.Channel]++
		require.Equal(t, AttemptOperationKey("s1", "def_1", i), a.OperationKey, "every attempt has its own key, in order")
	}
	require.Equal(t, 1, channels[0], "a refusal is not retried")
	require.Greater(t, channels[1], 3, "the text is retried until its deadline")
	require.Greater(t, channels[2], 3, "the page is retried until its deadline")
	require.Equal(t, len(d.Attempts), d.Attempted)
	require.Contains(t, d.Summary, "held for a human")
}

// An attempt whose outcome is unknown is never resent: the channel waits
// for it to be reconciled, and a human's finding that it did not happen
// lets the next attempt go out.
func TestHeldAttemptIsReconciledNotResent(t *testing.T) {
	env := newPostCallEnv(t, message(24*time.Hour))
	env.OnActivity(ActivityPostCallAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in AttemptInput) (Attempt, error) {
			if in.N == 0 {
				return answer(in, env.Now(), AttemptUnknown, "Outcome of deliver_message is unknown; held for reconciliation"), nil
			}
			return answer(in, env.Now(), AttemptDelivered, "deliver_message confirmed by ses"), nil
		}).Twice()
	checks := 0
	env.OnActivity(ActivityPostCallSettled, mock.Anything, mock.Anything).Return(
		func(_ context.Context, a Attempt) (Attempt, error) {
			checks++
			if checks < 4 {
				return a, nil
			}
			a.Outcome, a.Summary = AttemptUnavailable, "an operator found it did not happen"
			return a, nil
		})

	env.ExecuteWorkflow(PostCallWorkflow, PostCallInput{SessionID: "s1"})

	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
	d := env.last(t, "def_1")
	require.Equal(t, mt.InvocationSucceeded, d.State)
	require.Equal(t, "postcall:s1:def_1/1", d.OperationKey)
	require.Equal(t, 4, checks)
}

// A tool that opts in to on_unknown: resend is not held while SES answers
// ambiguously for three hours: each unknown attempt comes back settled by
// the policy, the channel is tried again under the next key after its
// backoff, nobody's reconciliation is awaited, and the first attempt after
// the outage delivers the message, once.
func TestResendOptedItemIsDeliveredOnceAfterThreeAmbiguousHours(t *testing.T) {
	env := newPostCallEnv(t, message(24*time.Hour))
	var start time.Time
	env.OnActivity(ActivityPostCallAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in AttemptInput) (Attempt, error) {
			now := env.Now()
			if start.IsZero() {
				start = now
			}
			require.Equal(t, "deliver_message", in.Tool, "no fallback while the first channel's deadline holds")
			if now.Sub(start) < 3*time.Hour {
				a := answer(in, now, AttemptUnknown, "Outcome of deliver_message is unknown")
				a.ResolvedBy, a.Resolution = "policy:on_unknown", "sent again under on_unknown: resend, so a duplicate is possible"
				return a, nil
			}
			return answer(in, now, AttemptDelivered, "deliver_message confirmed by ses"), nil
		})

	env.ExecuteWorkflow(PostCallWorkflow, PostCallInput{SessionID: "s1"})

	require.NoError(t, env.GetWorkflowError())
	env.AssertNotCalled(t, ActivityPostCallSettled, mock.Anything, mock.Anything)
	d := env.last(t, "def_1")
	require.Equal(t, mt.InvocationSucceeded, d.State)
	require.False(t, d.Held)
	delivered := 0
	keys := map[string]bool{}
	for i, a := range d.Attempts {
		require.False(t, keys[a.OperationKey], "attempt %d reuses %s", i, a.OperationKey)
		keys[a.OperationKey] = true
		if a.Outcome == AttemptDelivered {
			delivered++
			continue
		}
		require.Equal(t, AttemptUnknown, a.Outcome)
		require.Equal(t, "policy:on_unknown", a.ResolvedBy)
		if i > 0 {
			require.LessOrEqual(t, a.At.Sub(d.Attempts[i-1].At), DefaultBackoff.Max, "the backoff is capped")
		}
	}
	require.Equal(t, 1, delivered, "delivered once")
	last := d.Attempts[len(d.Attempts)-1]
	require.Equal(t, AttemptDelivered, last.Outcome)
	require.GreaterOrEqual(t, last.At.Sub(start), 3*time.Hour)
	require.Less(t, last.At.Sub(start), 3*time.Hour+DefaultBackoff.Max+time.Minute, "found within one capped interval of the outage's end")
	require.Equal(t, last.OperationKey, d.OperationKey)
	require.Less(t, len(d.Attempts), 40, "three hours cost a bounded history")
}

// Urgent work keeps each channel only for its short deadline: while SES
// is down, the page goes out within minutes, not a day.
func TestUrgentItemReachesItsFallbackQuickly(t *testing.T) {
	item := message(5 * time.Minute)
	item.Urgent = true
	item.Fallbacks[0].Deadline = 5 * time.Minute
	env := newPostCallEnv(t, item)
	var start time.Time
	env.OnActivity(ActivityPostCallAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in AttemptInput) (Attempt, error) {
			if start.IsZero() {
				start = env.Now()
			}
			if in.Tool == "request_callback" {
				return answer(in, env.Now(), AttemptDelivered, "texted"), nil
			}
			return answer(in, env.Now(), AttemptUnavailable, "ses unavailable; nothing was done"), nil
		})

	env.ExecuteWorkflow(PostCallWorkflow, PostCallInput{SessionID: "s1"})

	require.NoError(t, env.GetWorkflowError())
	d := env.last(t, "def_1")
	require.Equal(t, mt.InvocationSucceeded, d.State)
	last := d.Attempts[len(d.Attempts)-1]
	require.Equal(t, "request_callback", last.Tool)
	require.LessOrEqual(t, last.At.Sub(start), 5*time.Minute)
}

// An operator's retry continues the item's attempt numbers, so its keys
// never meet the ones already used.
func TestOperatorRetryContinuesTheAttemptKeys(t *testing.T) {
	env := newPostCallEnv(t)
	env.OnActivity(ActivityPostCallAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in AttemptInput) (Attempt, error) {
			return answer(in, env.Now(), AttemptDelivered, "sent"), nil
		}).Once()
	earlier := []Attempt{{N: 6, OperationKey: "postcall:s1:def_1/6", Outcome: AttemptUnavailable}}
	env.ExecuteWorkflow(PostCallRetryWorkflow, PostCallRetryInput{SessionID: "s1", Item: message(time.Hour), First: 7, Earlier: earlier})

	require.NoError(t, env.GetWorkflowError())
	var d Delivery
	require.NoError(t, env.GetWorkflowResult(&d))
	require.Equal(t, "postcall:s1:def_1/7", d.OperationKey)
	require.Len(t, d.Attempts, 2, "the earlier attempts stay listed")
	require.Equal(t, 8, d.Attempted)
	require.Equal(t, fmt.Sprintf("postcall-retry/s1/def_1/%d", 7), PostCallRetryWorkflowID("s1", "def_1", 7))
}
