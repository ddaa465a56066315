package grader

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/maestro-run/maestro/activities"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/standin"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// graderDeadlockTimeout bounds how long one workflow task may run before
// the test environment calls it a deadlock.
const graderDeadlockTimeout = 30 * time.Second

// launcher is the Temporal client admission talks to. Admission records the
// invocation and asks Temporal to start its workflow; the launcher keeps
// that request so the grader runs the same workflow in Temporal's test
// environment, where the retry policy's backoff passes in simulated time.
type launcher struct {
	// Client is left nil: should admission ever call anything else, the
	// grader panics rather than grade a path it no longer drives.
	client.Client

	mu      sync.Mutex
	started []workflows.InvocationInput
}

func (l *launcher) ExecuteWorkflow(_ context.Context, _ client.StartWorkflowOptions, _ any, args ...any) (client.WorkflowRun, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("grader: invocation workflow started with %d arguments, want 1", len(args))
	}
	if _, ok := args[0].(workflows.SessionInput); ok {
		// Admission's session bookkeeping: the session is not what the
		// grader grades.
		return nil, nil
	}
	in, ok := args[0].(workflows.InvocationInput)
	if !ok {
		return nil, fmt.Errorf("grader: invocation workflow started with a %T", args[0])
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started = append(l.started, in)
	return nil, nil
}

func (l *launcher) only() (workflows.InvocationInput, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.started) != 1 {
		return workflows.InvocationInput{}, fmt.Errorf("admission started %d invocation workflows, want 1", len(l.started))
	}
	return l.started[0], nil
}

// once drives one call of target down path on fresh stand-ins and returns
// what the agent was told, with what the providers hold afterwards.
func (g *grader) once(ctx context.Context, target Target, path Path, run int, expected Outcome) (Graded, error) {
	tool, _ := g.catalog.Tool(target.Tool) // checked by Run
	graded := Graded{Expected: expected, Tool: tool}

	set, err := standin.Start()
	if err != nil {
		return Graded{}, fmt.Errorf("error starting stand-ins: %w", err)
	}
	// Closing releases any request a fault still holds, so counting the
	// providers' effects happens before it.
	defer set.Close()
	tw, ses := set.TwilioConfig(), set.SESConfig()
	tw.Timeout, ses.Timeout = g.cfg.ProviderTimeout, g.cfg.ProviderTimeout
	a := &arrangement{set: set, target: target, twilio: &tw, ses: &ses, services: set.HTTPServices(), args: target.Args}
	if err := path.arrange(a); err != nil {
		return Graded{}, fmt.Errorf("error arranging %s: %w", path, err)
	}
	conns, err := connectors.NewSet(tw, ses, connectors.HTTPConfig{Services: a.services, Timeout: g.cfg.ProviderTimeout})
	if err != nil {
		return Graded{}, fmt.Errorf("error building connectors: %w", err)
	}

	start := time.Now()
	obs, err := g.call(ctx, conns, target, a.args, callID(target, path, run))
	graded.Latency = time.Since(start)
	if err != nil {
		return graded, err
	}
	graded.Observation = obs
	graded.Effects = effects(set)
	return graded, nil
}

// call admits the call and runs the workflow admission started, returning
// the observation the ledger holds for the agent, or admission's refusal.
func (g *grader) call(ctx context.Context, conns connectors.Set, target Target, args, id string) (mt.Observation, error) {
	// The test environment skips the time between attempts, while leases
	// run on the database's clock: a listing lag of a moment lets each
	// retry take over the claim the attempt before it kept.
	acts, err := activities.New(activities.Config{Store: g.cfg.Store, Catalog: g.catalog, Connectors: conns, Logger: g.cfg.Logger,
		ListingLag: time.Millisecond})
	if err != nil {
		return mt.Observation{}, fmt.Errorf("error building activities: %w", err)
	}
	l := &launcher{}
	gate, err := admission.New(admission.Config{Store: g.cfg.Store, Catalog: g.catalog, Temporal: l, Logger: g.cfg.Logger})
	if err != nil {
		return mt.Observation{}, fmt.Errorf("error building admission: %w", err)
	}
	adm, err := gate.Admit(ctx, admission.Request{
		AgentID: agent, SessionID: id, Tool: target.Tool, Args: []byte(args),
		OperationKey: id + ":call", SessionContext: sessionFacts,
	})
	var refusal *apitype.Refusal
	switch {
	case errors.As(err, &refusal):
		return refusal.Observation, nil
	case err != nil:
		return mt.Observation{}, fmt.Errorf("error admitting the call: %w", err)
	}
	in, err := l.only()
	if err != nil {
		return mt.Observation{}, err
	}

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(g.cfg.Logger))
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	env.SetWorkerOptions(worker.Options{
		Interceptors: []interceptor.WorkerInterceptor{&retryInfo{}},
		// The grader judges outcomes, not speed: on a machine busy with
		// every other package's tests a workflow task may hold the CPU
		// past the default second without being stuck.
		DeadlockDetectionTimeout: graderDeadlockTimeout,
	})
	acts.Register(env)
	env.RegisterWorkflowWithOptions(workflows.InvocationWorkflow, workflow.RegisterOptions{Name: workflows.InvocationWorkflowName})
	env.ExecuteWorkflow(workflows.InvocationWorkflowName, in)
	if !env.IsWorkflowCompleted() {
		return mt.Observation{}, errors.New("the invocation workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		return mt.Observation{}, fmt.Errorf("the invocation workflow failed without an observation: %w", err)
	}
	// The ledger, not the workflow result, is what the API answers from.
	inv, err := g.cfg.Store.InvocationGet(ctx, adm.Invocation.ID)
	if err != nil {
		return mt.Observation{}, fmt.Errorf("error reading the invocation: %w", err)
	}
	if !inv.State.Terminal() || inv.Observation == nil {
		return mt.Observation{}, fmt.Errorf("the ledger holds no final observation (state %s)", inv.State)
	}
	return *inv.Observation, nil
}

// effects counts what the receivers hold, through the stand-ins' own
// records rather than anything maestro wrote.
func effects(set *standin.Set) int {
	return set.Twilio.CountMessages() + set.SES.CountEmails() + set.Sandbox.CountWorkOrders() + set.Sandbox.CountRefunds()
}

// callID names a run's session and operation key, unique across runs and
// across grader runs sharing a ledger.
func callID(target Target, path Path, run int) string {
	slug := strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(target.Connector + "-" + string(path))
	return fmt.Sprintf("grader-%s-%d-%s", slug, run, strings.ToLower(rand.Text()[:8]))
}
