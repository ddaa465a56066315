package devtemporal_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/maestro-run/maestro/internal/devtemporal"
)

const taskQueue = "devtemporal-test"

func Greet(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var greeting string
	err := workflow.ExecuteActivity(ctx, Greeting, name).Get(ctx, &greeting)
	return greeting, err
}

func Greeting(_ context.Context, name string) (string, error) {
	return "hello " + name, nil
}

func TestStateSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	cfg := devtemporal.Config{DataDir: t.TempDir()}

	srv := start(ctx, t, cfg)
	c := dial(t, srv)
	stopWorker := runWorker(t, c)
	first := runGreet(ctx, t, c, "first", "ada")
	stopWorker()
	c.Close()
	require.NoError(t, srv.Stop())

	// Same directory: a fresh server must find the finished run. Each start
	// takes ports found free then, since a test running alongside may have
	// taken the ones the first server let go.
	srv = start(ctx, t, cfg)
	c = dial(t, srv)
	defer c.Close()

	desc, err := c.DescribeWorkflowExecution(ctx, "first", first)
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, desc.GetWorkflowExecutionInfo().GetStatus())

	var last enumspb.EventType
	iter := c.GetWorkflowHistory(ctx, "first", first, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		event, err := iter.Next()
		require.NoError(t, err)
		last = event.GetEventType()
	}
	require.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, last)

	// Listings come from visibility, which has a file of its own.
	require.FileExists(t, filepath.Join(cfg.DataDir, "visibility.db"))
	require.EventuallyWithT(t, func(c2 *assert.CollectT) {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: `WorkflowId = "first"`})
		require.NoError(c2, err)
		require.Len(c2, resp.GetExecutions(), 1)
		assert.Equal(c2, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, resp.GetExecutions()[0].GetStatus())
	}, time.Minute, 50*time.Millisecond)

	stopWorker = runWorker(t, c)
	defer stopWorker()
	runGreet(ctx, t, c, "second", "grace")
}

func start(ctx context.Context, t *testing.T, cfg devtemporal.Config) *devtemporal.Server {
	t.Helper()
	began := time.Now()
	srv, err := devtemporal.StartOnFreePort(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Stop()) })
	t.Logf("server ready at %s in %s", srv.HostPort(), time.Since(began).Round(time.Millisecond))
	return srv
}

func dial(t *testing.T, srv *devtemporal.Server) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  srv.HostPort(),
		Namespace: srv.Namespace(),
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	require.NoError(t, err)
	return c
}

func runWorker(t *testing.T, c client.Client) (stop func()) {
	t.Helper()
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(Greet)
	w.RegisterActivity(Greeting)
	require.NoError(t, w.Start())
	return w.Stop
}

// runGreet runs Greet to completion and returns its run ID.
func runGreet(ctx context.Context, t *testing.T, c client.Client, id, name string) string {
	t.Helper()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, Greet, name)
	require.NoError(t, err)
	var got string
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, "hello "+name, got)
	return run.GetRunID()
}
