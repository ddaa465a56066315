package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/codec"
	"github.com/maestro-run/maestro/internal/codec/codectest"
	"github.com/maestro-run/maestro/internal/devtemporal/devtemporaltest"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/syncbuf"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// deployment is what the processes of one maestro deployment share: a
// Temporal namespace and task queue, a PostgreSQL ledger, the providers.
type deployment struct {
	t        *testing.T
	dsn      string
	role     string
	catalog  string
	queue    string
	codec    string // every process encrypts under the same key
	standins *standin.Set
}

// rolesAgentKey is the agent's key in the deployment's catalog: maestro
// refuses the demo keys outside dev mode.
const rolesAgentKey = "roles-agent-key"

func newDeployment(t *testing.T) *deployment {
	t.Helper()
	dsn, role := ledgertest.PostgresServiceDSN(t)
	sins, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = sins.Close() })
	doc, err := tools.ReplacingDemoKeys(tools.DemoCatalogYAML, rolesAgentKey, "roles-ops-key")
	require.NoError(t, err)
	cat, err := tools.TrustingDeclaredFacts(doc)
	require.NoError(t, err)
	return &deployment{t: t, dsn: dsn, role: role, catalog: filepathIn(t, "catalog.yaml", cat), queue: "tq-" + randomID(),
		codec: codectest.Env("roles"), standins: sins}
}

// config is a production-mode process of the deployment in role.
func (dep *deployment) config(role server.Role) server.Config {
	return server.Config{
		Role:                role,
		HTTPAddr:            "127.0.0.1:0",
		DatabaseURL:         dep.dsn,
		DatabaseServiceRole: dep.role,
		TemporalAddress:     temporalServer.HostPort(),
		Namespace:           devtemporaltest.Namespace,
		TaskQueue:           dep.queue,
		CatalogPath:         dep.catalog,
		Codec:               codec.Config{Keys: dep.codec},
		Providers:           server.Providers{Twilio: dep.standins.TwilioConfig(), SES: dep.standins.SESConfig(), HTTP: dep.standins.HTTPServices()},
		// The API answers "pending" soon, so a test can tell a call it
		// admitted from one it ran.
		WaitTimeout: time.Second,
		Logger:      slog.New(slog.DiscardHandler),
	}
}

func (dep *deployment) start(cfg server.Config) *server.Server {
	dep.t.Helper()
	d, err := server.Start(dep.t.Context(), cfg)
	require.NoError(dep.t, err)
	dep.t.Cleanup(func() { _ = d.Stop(context.Background()) })
	return d
}

// pollers lists who polls the deployment's task queue for workflow and
// activity tasks.
func (dep *deployment) pollers() []string {
	dep.t.Helper()
	var out []string
	for _, kind := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		resp, err := temporalClient.WorkflowService().DescribeTaskQueue(dep.t.Context(), &workflowservice.DescribeTaskQueueRequest{
			Namespace:     devtemporaltest.Namespace,
			TaskQueue:     &taskqueuepb.TaskQueue{Name: dep.queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
			TaskQueueType: kind,
		})
		require.NoError(dep.t, err)
		for _, p := range resp.GetPollers() {
			out = append(out, p.GetIdentity())
		}
	}
	return out
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestAPIAndWorkerProcessesShareOneQueue runs maestro as an API-only and
// two worker-only processes on one Temporal and one ledger: the API admits
// and answers "pending" while no worker runs, polls no task queue itself,
// and the workers, started together, run the call once.
func TestAPIAndWorkerProcessesShareOneQueue(t *testing.T) {
	t.Parallel()
	dep := newDeployment(t)
	ctx := t.Context()

	apiProc := dep.start(dep.config(server.RoleAPI))
	agent := apiclient.New(apiProc.URL(), rolesAgentKey, apiclient.Options{})
	session := "call-" + randomID()
	req := invokeRequest(session, "send_sms", session+":sms", smsArgs)
	req.SessionContext = sessionFacts
	admitted, err := agent.Invoke(ctx, req)
	require.NoError(t, err)
	require.True(t, admitted.Pending, "no worker runs: the call is admitted, not run")
	require.Equal(t, 0, dep.standins.Twilio.CountMessages())
	require.Empty(t, dep.pollers(), "the API-only process polls no task queue")
	require.Equal(t, http.StatusOK, getStatus(t, apiProc.URL()+"/readyz"))

	// Two workers start at once, as a scaled-out deployment's do: both
	// mirror the catalog and schedule the sweep and the audit.
	workers := make(chan *server.Server, 2)
	var wg sync.WaitGroup
	for range cap(workers) {
		wg.Go(func() {
			d, err := server.Start(ctx, dep.config(server.RoleWorker))
			assert.NoError(t, err)
			workers <- d
		})
	}
	wg.Wait()
	close(workers)
	var workerProc *server.Server
	for d := range workers {
		require.NotNil(t, d)
		t.Cleanup(func() { _ = d.Stop(context.Background()) })
		workerProc = d
	}
	done, err := agent.Wait(ctx, admitted.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	msgs := dep.standins.Twilio.Messages()
	require.Len(t, msgs, 1, "the worker-only process sent the text")
	require.Equal(t, msgs[0].SID, done.Observation.Receipt.ID)
	require.NotEmpty(t, dep.pollers(), "the worker-only process polls the task queue")

	// The worker-only process answers probes and nothing else.
	require.Equal(t, http.StatusOK, getStatus(t, workerProc.URL()+"/healthz"))
	require.Equal(t, http.StatusOK, getStatus(t, workerProc.URL()+"/readyz"))
	_, err = apiclient.New(workerProc.URL(), rolesAgentKey, apiclient.Options{}).Tools(ctx)
	require.ErrorContains(t, err, "runs the worker only")
}

// TestStopLetsTheCallInFlightFinish stops maestro while a text is held at
// Twilio: the worker stops polling but lets the send finish within the
// drain window, so the call ends succeeded with its receipt rather than in
// reconciliation, and the process stops once it has.
func TestStopLetsTheCallInFlightFinish(t *testing.T) {
	t.Parallel()
	dep := newDeployment(t)
	ctx := t.Context()
	var logs syncbuf.Buffer
	cfg := dep.config(server.RoleAll)
	cfg.DrainTimeout = time.Minute
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	d, err := server.Start(ctx, cfg)
	require.NoError(t, err)

	faults := dep.standins.Twilio.Faults()
	faults.HangNext(1)
	session := "call-" + randomID()
	req := invokeRequest(session, "send_sms", session+":sms", smsArgs)
	req.SessionContext = sessionFacts
	admitted, err := apiclient.New(d.URL(), rolesAgentKey, apiclient.Options{}).Invoke(ctx, req)
	require.NoError(t, err)
	require.True(t, admitted.Pending)
	require.NoError(t, faults.WaitHeld(ctx, 1))

	stopped := make(chan error, 1)
	go func() { stopped <- d.Stop(context.Background()) }()
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "stopping the worker")
	}, time.Minute, 10*time.Millisecond, "the worker is asked to stop while the text is held")
	faults.Release()
	select {
	case err = <-stopped:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("maestro did not stop once the call in flight finished")
	}

	st, err := ledger.OpenPostgres(ctx, dep.dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	inv, err := st.InvocationGet(ctx, admitted.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, inv.State, "%+v", inv.Observation)
	msgs := dep.standins.Twilio.Messages()
	require.Len(t, msgs, 1)
	require.Equal(t, msgs[0].SID, inv.Observation.Receipt.ID)
	events, err := st.ReconciliationEventList(ctx, session+":sms")
	require.NoError(t, err)
	require.Empty(t, events, "nothing went to reconciliation")
}

// TestReadyzSaysWhyNotReady checks /readyz's answer once started: ready
// while PostgreSQL and Temporal answer, naming the one that does not, and
// draining once the process is stopping.
func TestReadyzSaysWhyNotReady(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := ledgertest.PostgresService(t)

	ready, drain := server.NewReadyCheck(st, temporalClient)
	require.Equal(t, apitype.Readiness{Status: apitype.ReadinessReady}, ready(ctx))

	down, err := client.NewLazyClient(client.Options{HostPort: freeAddr(t), Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	require.NoError(t, err)
	t.Cleanup(down.Close)
	check, _ := server.NewReadyCheck(st, down)
	got := check(ctx)
	require.Equal(t, apitype.ReadinessUnavailable, got.Status)
	require.Equal(t, "temporal", got.WaitingFor)
	require.NotEmpty(t, got.Detail)

	closed := ledgertest.PostgresService(t)
	require.NoError(t, closed.Close())
	check, _ = server.NewReadyCheck(closed, temporalClient)
	got = check(ctx)
	require.Equal(t, apitype.ReadinessUnavailable, got.Status)
	require.Equal(t, "postgresql", got.WaitingFor)

	drain()
	require.Equal(t, apitype.Readiness{Status: apitype.ReadinessDraining}, ready(ctx))
}

// TestRoleMustBeKnown refuses an unknown role, and a role other than all
// in dev mode, which embeds everything in one process.
func TestRoleMustBeKnown(t *testing.T) {
	t.Parallel()
	_, err := server.Start(t.Context(), server.Config{Dev: true, DataDir: t.TempDir(), Role: "both", Logger: slog.New(slog.DiscardHandler)})
	require.ErrorContains(t, err, `--role (MAESTRO_ROLE) must be all, api or worker, got "both"`)
	_, err = server.Start(t.Context(), server.Config{Dev: true, DataDir: t.TempDir(), Role: server.RoleWorker, Logger: slog.New(slog.DiscardHandler)})
	require.ErrorContains(t, err, "--dev runs every part in one process: drop --role worker")
	_, err = server.Start(t.Context(), server.Config{Role: server.RoleAPI, Logger: slog.New(slog.DiscardHandler)})
	require.ErrorContains(t, err, "TEMPORAL_ADDRESS is required outside dev mode")
}
