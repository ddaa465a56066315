package activities_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/maestro-run/maestro/activities"
	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// fixture runs the real Execute activity against PostgreSQL and the
// stand-ins; only Temporal is replaced, by its activity test environment.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	store    ledger.Store
	raw      *sql.DB
	standins *standin.Set
	conns    connectors.Set
	env      *testsuite.TestActivityEnvironment
	n        int
}

func setup(t *testing.T) *fixture {
	t.Helper()
	return setupCatalog(t, tools.DemoCatalogYAML)
}

// setupCatalog is setup with another catalog than the demo's.
func setupCatalog(t *testing.T, catalog []byte) *fixture {
	t.Helper()
	dsn := ledgertest.PostgresDSN(t)
	st, err := ledger.OpenPostgres(t.Context(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(t.Context()))
	raw, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })

	cat, err := tools.Load(catalog)
	require.NoError(t, err)
	require.NoError(t, st.ToolRegistrySync(t.Context(), server.RegistryRows(cat)))

	sins, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = sins.Close() })
	conns, err := connectors.NewSet(sins.TwilioConfig(), sins.SESConfig(), connectors.HTTPConfig{Services: sins.HTTPServices()})
	require.NoError(t, err)
	acts, err := activities.New(activities.Config{Store: st, Catalog: cat, Connectors: conns})
	require.NoError(t, err)

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts.Register(env)
	return &fixture{t: t, ctx: t.Context(), store: st, raw: raw, standins: sins, conns: conns, env: env}
}

// approvedRefund records a gated refund and approves it with the given
// token lifetime, as the API would.
func (f *fixture) approvedRefund(tokenTTL time.Duration) workflows.ExecuteInput {
	f.t.Helper()
	f.n++
	args, hash, err := approval.Canonicalize(json.RawMessage(`{"tenant_id":"t_100","amount_cents":1500,"reason":"Duplicate"}`))
	require.NoError(f.t, err)
	key := "s1:refund-" + string(rune('a'+f.n))
	inv, _, err := f.store.InvocationInsert(f.ctx, ledger.Invocation{OperationKey: key, SessionID: "s1", AgentID: "voice-agent",
		Tool: "issue_refund", Args: args, ArgsHash: hash, Route: mt.RouteGated, State: mt.InvocationAwaitingApproval, WorkflowID: "wf-" + key})
	require.NoError(f.t, err)
	apr, err := f.store.ApprovalRequestInsert(f.ctx, ledger.ApprovalRequest{InvocationID: inv.ID, OperationKey: key, SessionID: "s1",
		AgentID: "voice-agent", Tool: "issue_refund", Args: args, ArgsHash: hash, ApproverRole: "manager",
		Status: ledger.ApprovalPending, TimeoutAt: time.Now().Add(time.Hour)})
	require.NoError(f.t, err)
	_, err = f.store.ApprovalDecide(f.ctx, ledger.ApprovalDecideParams{ApprovalID: apr.ID, Decision: ledger.DecisionApprove,
		Actor: "operator:demo-manager", TokenTTL: tokenTTL})
	require.NoError(f.t, err)
	return workflows.ExecuteInput{InvocationID: inv.ID, OperationKey: key, SessionID: "s1", Tool: "issue_refund",
		Route: mt.RouteGated, Args: args, ArgsHash: hash, ApprovalID: apr.ID}
}

func (f *fixture) execute(in workflows.ExecuteInput) (workflows.InvocationResult, error) {
	val, err := f.env.ExecuteActivity(workflows.ActivityExecute, in)
	if err != nil {
		return workflows.InvocationResult{}, err
	}
	var res workflows.InvocationResult
	require.NoError(f.t, val.Get(&res))
	return res, nil
}

func TestApprovedCallRunsOnceWithItsToken(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.approvedRefund(time.Hour)

	res, err := f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State, "%+v", res.Observation)
	require.Equal(t, 1, f.standins.Sandbox.CountRefunds())

	// The same invocation again (a retry after a crash) is kept to one
	// effect by the ledger.
	res, err = f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State)
	require.Equal(t, 1, f.standins.Sandbox.CountRefunds())
}

func TestReplayedTokenIsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.approvedRefund(time.Hour)
	_, err := f.execute(in)
	require.NoError(t, err)

	// Another executor presenting the same approval finds its token spent.
	replay := in
	replay.OperationKey = in.OperationKey + "-again"
	other, _, err := f.store.InvocationInsert(f.ctx, ledger.Invocation{OperationKey: replay.OperationKey, SessionID: "s1", AgentID: "voice-agent",
		Tool: "issue_refund", Args: in.Args, ArgsHash: in.ArgsHash, Route: mt.RouteGated, State: mt.InvocationAwaitingApproval, WorkflowID: "wf-other"})
	require.NoError(t, err)
	replay.InvocationID = other.ID
	res, err := f.execute(replay)
	require.NoError(t, err)
	require.Equal(t, mt.CodeApprovalClosed, res.Observation.Code)
	require.Equal(t, 1, f.standins.Sandbox.CountRefunds())
}

func TestExpiredTokenIsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.approvedRefund(time.Nanosecond)

	res, err := f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationFailed, res.State)
	require.Equal(t, mt.CodeApprovalExpired, res.Observation.Code)
	require.Zero(t, f.standins.Sandbox.CountRefunds())
}

func TestTamperedArgumentsAreRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)

	// Arguments changed after approval without their hash.
	in := f.approvedRefund(time.Hour)
	_, err := f.raw.ExecContext(f.ctx, `UPDATE approval_requests SET args = '{"amount_cents":49999,"reason":"Duplicate","tenant_id":"t_100"}' WHERE id = $1`, in.ApprovalID)
	require.NoError(t, err)
	_, err = f.execute(in)
	require.ErrorContains(t, err, "no longer hash to the approved value")

	// Arguments and hash both changed: the token is bound to the old hash.
	in = f.approvedRefund(time.Hour)
	forged, hash, err := approval.Canonicalize(json.RawMessage(`{"tenant_id":"t_100","amount_cents":49999,"reason":"Duplicate"}`))
	require.NoError(t, err)
	_, err = f.raw.ExecContext(f.ctx, `UPDATE approval_requests SET args = $2, args_hash = $3 WHERE id = $1`, in.ApprovalID, string(forged), hash)
	require.NoError(t, err)
	res, err := f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.CodeApprovalClosed, res.Observation.Code)
	require.Zero(t, f.standins.Sandbox.CountRefunds())
}
