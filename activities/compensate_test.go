package activities_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/maestro-run/maestro/activities"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// versionSource serves its catalog as the current version and answers any
// other version with err: a ledger that did not answer, or one that keeps
// no such version.
type versionSource struct {
	*tools.Catalog
	err error
}

func (s versionSource) At(_ context.Context, version string) (*tools.Catalog, error) {
	if version == "" || version == s.Hash() {
		return s.Catalog, nil
	}
	return nil, s.err
}

// compensate runs one rollback step's Compensate activity with the
// catalog source src.
func (f *fixture) compensate(src tools.Source, step workflows.UndoStep) (workflows.UndoOutcome, error) {
	f.t.Helper()
	acts, err := activities.New(activities.Config{Store: f.store, Catalog: src, Connectors: f.conns})
	require.NoError(f.t, err)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts.Register(env)
	val, err := env.ExecuteActivity(workflows.ActivityCompensate, step)
	if err != nil {
		return workflows.UndoOutcome{}, err
	}
	var out workflows.UndoOutcome
	require.NoError(f.t, val.Get(&out))
	return out, nil
}

// A compensation runs by the catalog version its effect ran under. When
// the ledger does not answer for that version the step is retried and the
// undo entry stays pending; only a version that can never load fails it.
func TestCompensationRetriesWhenItsCatalogVersionCannotBeRead(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.invocation("create_work_order", mt.RouteCompensable,
		`{"tenant_id":"t_100","category":"plumbing","description":"Leaking tap","priority":"routine"}`)
	res, err := f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State, "%+v", res.Observation)
	_, err = f.raw.ExecContext(f.ctx, `UPDATE invocations SET catalog_version = 'elsewhere' WHERE id = $1`, in.InvocationID)
	require.NoError(t, err)
	undo, err := f.store.UndoListBySession(f.ctx, in.SessionID)
	require.NoError(t, err)
	require.Len(t, undo, 1)
	step := workflows.UndoStep{UndoID: undo[0].ID, Tool: undo[0].CompensationTool, OperationKey: in.OperationKey, Seq: undo[0].Seq}
	cat, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)

	_, err = f.compensate(versionSource{cat, errors.New("connection reset by peer")}, step)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.False(t, appErr.NonRetryable(), "a ledger that did not answer may answer the retry: %v", err)
	entry, err := f.store.UndoGet(f.ctx, step.UndoID)
	require.NoError(t, err)
	require.Equal(t, ledger.UndoPending, entry.Status, "nothing was decided about the entry")
	orders := f.standins.Sandbox.WorkOrders()
	require.Len(t, orders, 1)
	require.Nil(t, orders[0].CancelledAt, "nothing was undone")

	out, err := f.compensate(versionSource{cat, tools.ErrVersionUnknown}, step)
	require.NoError(t, err)
	require.Equal(t, workflows.UndoFailed, out.Status)
	require.Contains(t, out.Summary, "cannot be loaded; nothing was run")
	entry, err = f.store.UndoGet(f.ctx, step.UndoID)
	require.NoError(t, err)
	require.Equal(t, ledger.UndoFailed, entry.Status)
}
