package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"
)

// TestFailureMessagesAreEncrypted: an error's message reaches the history
// as a failure, which Temporal stores in clear unless the failure
// converter encodes it. A message quoting a caller's number must not be
// readable there.
func TestFailureMessagesAreEncrypted(t *testing.T) {
	t.Parallel()
	const secret = "could not text +14155550177 about the broken boiler"
	taskQueue := "tq-failure-" + randomID()
	w := worker.New(temporalClient, taskQueue, worker.Options{})
	w.RegisterActivityWithOptions(func(context.Context) error {
		return temporal.NewNonRetryableApplicationError(secret, "Test", nil)
	}, activity.RegisterOptions{Name: "FailingActivity"})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		return workflow.ExecuteActivity(ctx, "FailingActivity").Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "FailingWorkflow"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	run, err := temporalClient.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: "failing-" + randomID(), TaskQueue: taskQueue}, "FailingWorkflow")
	require.NoError(t, err)
	err = run.Get(t.Context(), nil)
	require.ErrorContains(t, err, secret, "maestro's own client reads the message back")

	hist := history(t.Context(), t, dialTemporal(t, client.Options{}), run.GetID())
	raw, err := proto.Marshal(hist)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "broken boiler")
	require.NotContains(t, string(raw), "+14155550177")
	failures := 0
	for _, ev := range hist.Events {
		if f := failureOf(ev); f != nil {
			failures++
			require.Equal(t, "Encoded failure", f.GetMessage())
		}
	}
	require.Equal(t, 2, failures, "the activity's failure and the workflow's")
	requireEveryPayloadEncrypted(t.Context(), t, run.GetID(), hist)
}
