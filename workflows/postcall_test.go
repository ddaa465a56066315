package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	mt "github.com/maestro-run/maestro/maestrotype"
)

func gatherStub(context.Context, PostCallInput) (Gathered, error) { return Gathered{}, nil }
func judgeStub(context.Context, Gathered) (Judged, error)         { return Judged{}, nil }
func dispatchStub(context.Context, string, string, mt.WorkItem) (Delivery, error) {
	return Delivery{}, nil
}
func persistStub(context.Context, Delivery) error { return nil }

func TestPostCallGathersJudgesDispatchesAndPersistsEachItem(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	for name, fn := range map[string]any{
		ActivityPostCallGather: gatherStub, ActivityPostCallJudge: judgeStub,
		ActivityPostCallDispatch: dispatchStub, ActivityPostCallPersist: persistStub,
	} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	transcript := mt.Transcript{Turns: []mt.Turn{{Speaker: "caller", Text: "please call me back"}}}
	env.OnActivity(ActivityPostCallGather, mock.Anything, mock.Anything).Return(Gathered{SessionID: "s1", Transcript: transcript}, nil).Once()
	env.OnActivity(ActivityPostCallJudge, mock.Anything, mock.MatchedBy(func(g Gathered) bool {
		return len(g.Transcript.Turns) == 1
	})).Return(Judged{
		Items: []mt.WorkItem{
			{Key: "def_1", Tool: "deliver_message", DeferredID: "def_1"},
			{Key: "callback_request-0", Tool: "request_callback"},
		},
		Failures: []ItemFailure{{Key: "def_2", DeferredID: "def_2", Reason: "no delivery rule"}},
	}, nil).Once()
	env.OnActivity(ActivityPostCallDispatch, mock.Anything, "s1", mock.Anything, mock.Anything).Return(
		func(_ context.Context, sid, _ string, item mt.WorkItem) (Delivery, error) {
			if item.Key == "callback_request-0" {
				return Delivery{}, temporal.NewNonRetryableApplicationError("provider down", "Test", nil)
			}
			return Delivery{SessionID: sid, Item: item, OperationKey: PostCallOperationKey(sid, item.Key), State: mt.InvocationSucceeded,
				Receipt: &mt.Receipt{Provider: "ses", ID: "m1"}}, nil
		}).Twice()
	var persisted []Delivery
	env.OnActivity(ActivityPostCallPersist, mock.Anything, mock.Anything).Return(
		func(_ context.Context, d Delivery) error { persisted = append(persisted, d); return nil }).Times(3)

	env.ExecuteWorkflow(PostCallWorkflow, PostCallInput{SessionID: "s1"})

	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
	require.Len(t, persisted, 3)
	require.Equal(t, mt.InvocationFailed, persisted[0].State, "a judged failure is persisted as failed, never done")
	require.Equal(t, "def_2", persisted[0].Item.DeferredID)
	require.Equal(t, mt.InvocationSucceeded, persisted[1].State)
	require.Equal(t, "postcall:s1:def_1", persisted[1].OperationKey)
	require.Equal(t, mt.InvocationFailed, persisted[2].State, "an undeliverable item is failed with its reason")
	require.Contains(t, persisted[2].Summary, "provider down")
}
