package api

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/internal/answer"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// unfinishedWorkflows is a Temporal whose workflows never complete: a wait
// on one ends only with its context.
type unfinishedWorkflows struct{ client.Client }

func (unfinishedWorkflows) GetWorkflow(context.Context, string, string) client.WorkflowRun {
	return unfinishedRun{}
}

type unfinishedRun struct{ client.WorkflowRun }

func (unfinishedRun) Get(ctx context.Context, _ any) error {
	<-ctx.Done()
	return ctx.Err()
}

func waitSetup(t *testing.T, board *answer.Board) (*Server, ledger.Store, ledger.Invocation) {
	t.Helper()
	ctx := t.Context()
	st, err := ledger.OpenSQLite(ctx, filepath.Join(t.TempDir(), "ledger.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.NoError(t, st.Migrate(ctx))
	cat, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	inv, _, err := st.InvocationInsert(ctx, ledger.Invocation{
		OperationKey: "s1:text", SessionID: "s1", AgentID: "agent", Tool: "send_sms",
		Args: []byte(`{}`), ArgsHash: "h", Route: mt.RouteWrite, State: mt.InvocationRunning, WorkflowID: "invocation/s1:text",
	})
	require.NoError(t, err)
	s := &Server{cfg: Config{Store: st, Catalog: tools.NewLive(cat, nil), Temporal: unfinishedWorkflows{},
		WaitTimeout: time.Hour, Answers: board, Logger: slog.New(slog.DiscardHandler)}}
	return s, st, inv
}

// waited is the invocation a wait returns.
func waited(s *Server, ctx context.Context, inv ledger.Invocation, recorded <-chan struct{}) ledger.Invocation {
	got, _ := s.wait(ctx, inv, recorded)
	return got
}

func finish(t *testing.T, st ledger.Store, id string) {
	t.Helper()
	require.NoError(t, st.InvocationFinish(t.Context(), id, mt.InvocationSucceeded,
		mt.Observation{Status: mt.StatusSuccess, Summary: "sent", Receipt: &mt.Receipt{Provider: "twilio", ID: "SM1"}}))
}

// The outcome is committed while the workflow has yet to complete: the
// caller hears it from the ledger at once.
func TestWaitAnswersOnceTheOutcomeIsCommittedInThisProcess(t *testing.T) {
	t.Parallel()
	board := answer.New()
	s, st, inv := waitSetup(t, board)
	got := make(chan ledger.Invocation, 1)
	go func() { got <- waited(s, t.Context(), inv, nil) }()

	require.Eventually(t, func() bool { return board.Waiting(inv.ID) }, 10*time.Second, time.Millisecond)
	finish(t, st, inv.ID)
	board.Recorded(inv.ID)

	heard := <-got
	require.Equal(t, mt.InvocationSucceeded, heard.State)
	require.Equal(t, "SM1", heard.Observation.Receipt.ID)
	require.False(t, board.Waiting(inv.ID), "the wait is forgotten once answered")
}

// Committed before the request began waiting: read, not heard.
func TestWaitReadsAnOutcomeCommittedBeforeIt(t *testing.T) {
	t.Parallel()
	board := answer.New()
	s, st, inv := waitSetup(t, board)
	finish(t, st, inv.ID)
	board.Recorded(inv.ID)

	require.Equal(t, mt.InvocationSucceeded, waited(s, t.Context(), inv, nil).State)
}

// Without a board the wait is the workflow's, here until the wait times
// out; what is said is still read from the ledger.
func TestWaitWithoutABoardWaitsForTheWorkflow(t *testing.T) {
	t.Parallel()
	s, st, inv := waitSetup(t, nil)
	finish(t, st, inv.ID)
	s.cfg.WaitTimeout = time.Nanosecond

	require.Equal(t, mt.InvocationSucceeded, waited(s, t.Context(), inv, nil).State, "the ledger still decides what is said")
}

// completedWorkflows is a Temporal whose workflows have all completed.
type completedWorkflows struct{ client.Client }

func (completedWorkflows) GetWorkflow(context.Context, string, string) client.WorkflowRun {
	return completedRun{}
}

type completedRun struct{ client.WorkflowRun }

func (completedRun) Get(context.Context, any) error { return nil }

// A wait registered before the workflow started hears the outcome and
// reads the ledger once, after it.
func TestWaitRegisteredAtAdmissionHearsTheOutcome(t *testing.T) {
	t.Parallel()
	board := answer.New()
	s, st, inv := waitSetup(t, board)
	recorded, forget := board.Wait(inv.ID)
	defer forget()
	got := make(chan ledger.Invocation, 1)
	go func() { got <- waited(s, t.Context(), inv, recorded) }()

	finish(t, st, inv.ID)
	board.Recorded(inv.ID)
	require.Equal(t, mt.InvocationSucceeded, (<-got).State)
}

// The board says nothing (the outcome was recorded elsewhere): once it
// has been quiet a while, the workflow's completion ends the wait.
func TestWaitFallsBackToTheWorkflowWhenTheBoardIsQuiet(t *testing.T) {
	t.Parallel()
	board := answer.New()
	s, st, inv := waitSetup(t, board)
	s.cfg.Temporal = completedWorkflows{}
	recorded, forget := board.Wait(inv.ID)
	defer forget()
	finish(t, st, inv.ID)

	start := time.Now()
	require.Equal(t, mt.InvocationSucceeded, waited(s, t.Context(), inv, recorded).State)
	require.GreaterOrEqual(t, time.Since(start), boardQuiet, "the workflow is asked only once the board has been quiet")
}
