package activities_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// admitted records an invocation of tool as admission would; a gated one
// is approved by role, as the API would.
func (f *fixture) admitted(tool, rawArgs string, route mt.Route, role string) workflows.ExecuteInput {
	f.t.Helper()
	f.n++
	args, hash, err := approval.Canonicalize(json.RawMessage(rawArgs))
	require.NoError(f.t, err)
	key := "s1:" + tool + "-" + string(rune('a'+f.n))
	state := mt.InvocationRunning
	if route == mt.RouteGated {
		state = mt.InvocationAwaitingApproval
	}
	inv, _, err := f.store.InvocationInsert(f.ctx, ledger.Invocation{OperationKey: key, SessionID: "s1", AgentID: "voice-agent",
		Tool: tool, Args: args, ArgsHash: hash, Route: route, State: state, WorkflowID: "wf-" + key})
	require.NoError(f.t, err)
	in := workflows.ExecuteInput{InvocationID: inv.ID, OperationKey: key, SessionID: "s1", Tool: tool, Route: route, Args: args, ArgsHash: hash}
	if route != mt.RouteGated {
		return in
	}
	apr, err := f.store.ApprovalRequestInsert(f.ctx, ledger.ApprovalRequest{InvocationID: inv.ID, OperationKey: key, SessionID: "s1",
		AgentID: "voice-agent", Tool: tool, Args: args, ArgsHash: hash, ApproverRole: role,
		Status: ledger.ApprovalPending, TimeoutAt: time.Now().Add(time.Hour)})
	require.NoError(f.t, err)
	_, err = f.store.ApprovalDecide(f.ctx, ledger.ApprovalDecideParams{ApprovalID: apr.ID, Decision: ledger.DecisionApprove,
		Actor: "operator:demo-ops", TokenTTL: time.Hour})
	require.NoError(f.t, err)
	in.ApprovalID = apr.ID
	return in
}

func stateOf(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

func TestDeleteRecordsTheTenantBeforeAndAfter(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.admitted("delete_tenant_account", `{"tenant_id":"t_101"}`, mt.RouteGated, "ops")

	res, err := f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State, "%+v", res.Observation)
	tenant, _ := f.standins.Sandbox.Tenant("t_101")
	require.True(t, tenant.Deleted)

	reads, err := f.store.EffectStateReadsGet(f.ctx, in.OperationKey)
	require.NoError(t, err)
	// The before read ran ahead of the delete: it saw the live record.
	require.NotNil(t, reads.Before)
	require.Equal(t, "tool lookup_tenant", reads.Before.Source)
	require.JSONEq(t, `{"tenant_id":"t_101"}`, string(reads.Before.Args))
	require.True(t, reads.Before.Found)
	require.Empty(t, reads.Before.Error)
	before := stateOf(t, reads.Before.State)
	require.Equal(t, "James Chen", before["name"])
	require.Equal(t, false, before["deleted"])
	// The read-back saw what the delete left.
	require.NotNil(t, reads.After)
	require.Empty(t, reads.After.Error)
	require.Equal(t, true, stateOf(t, reads.After.State)["deleted"])
	require.False(t, reads.After.ReadAt.Before(reads.Before.ReadAt))

	// A retry of the settled call reads nothing again: the reads recorded
	// with the effect stand.
	res, err = f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State)
	again, err := f.store.EffectStateReadsGet(f.ctx, in.OperationKey)
	require.NoError(t, err)
	require.Equal(t, reads.Before.ReadAt, again.Before.ReadAt)
	require.Equal(t, reads.After.ReadAt, again.After.ReadAt)

	bySession, err := f.store.EffectStateReadsListBySession(f.ctx, "s1")
	require.NoError(t, err)
	require.Len(t, bySession, 1)
	require.Equal(t, in.OperationKey, bySession[0].OperationKey)
}

func TestFailedBeforeReadSendsNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.admitted("delete_tenant_account", `{"tenant_id":"t_102"}`, mt.RouteGated, "ops")
	require.NoError(t, f.standins.Sandbox.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusBadRequest, Method: http.MethodGet, Path: "/v1/tenants"}))

	res, err := f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationFailed, res.State)
	require.Equal(t, mt.CodeBeforeReadFailed, res.Observation.Code)
	require.Contains(t, res.Observation.Summary, "nothing was sent")
	tenant, _ := f.standins.Sandbox.Tenant("t_102")
	require.False(t, tenant.Deleted, "the delete never reached the provider")

	eff, err := f.store.EffectGet(f.ctx, in.OperationKey)
	require.NoError(t, err)
	require.Equal(t, mt.EffectFailed, eff.Status)
	reads, err := f.store.EffectStateReadsGet(f.ctx, in.OperationKey)
	require.NoError(t, err)
	require.NotNil(t, reads.Before)
	require.Contains(t, reads.Before.Error, "400")
	require.Nil(t, reads.After)

	// The call stays failed: a retry neither reads again nor sends.
	res, err = f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.CodeBeforeReadFailed, res.Observation.Code)
	tenant, _ = f.standins.Sandbox.Tenant("t_102")
	require.False(t, tenant.Deleted)
}

func TestUnavailableBeforeReadIsRetriedBeforeAnythingIsSent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.admitted("delete_tenant_account", `{"tenant_id":"t_103"}`, mt.RouteGated, "ops")
	require.NoError(t, f.standins.Sandbox.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusServiceUnavailable, Method: http.MethodGet, Path: "/v1/tenants"}))

	_, err := f.execute(in)
	require.ErrorContains(t, err, "503")
	tenant, _ := f.standins.Sandbox.Tenant("t_103")
	require.False(t, tenant.Deleted)
	_, err = f.store.EffectGet(f.ctx, in.OperationKey)
	require.ErrorIs(t, err, ledger.ErrNotFound, "the key is handed back for the retry")

	res, err := f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State, "%+v", res.Observation)
	reads, err := f.store.EffectStateReadsGet(f.ctx, in.OperationKey)
	require.NoError(t, err)
	require.True(t, reads.Before.Found)
	require.Equal(t, false, stateOf(t, reads.Before.State)["deleted"])
}

func TestFailedAfterReadLeavesTheEffectSucceeded(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.admitted("create_work_order", `{"tenant_id":"t_100","category":"plumbing","description":"Leak under the sink","priority":"routine"}`, mt.RouteCompensable, "")
	require.NoError(t, f.standins.Sandbox.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusInternalServerError, Method: http.MethodGet, Path: "/v1/work_orders"}))

	res, err := f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State, "%+v", res.Observation)
	require.Equal(t, 1, f.standins.Sandbox.CountWorkOrders())

	eff, err := f.store.EffectGet(f.ctx, in.OperationKey)
	require.NoError(t, err)
	require.Equal(t, mt.EffectSucceeded, eff.Status)
	reads, err := f.store.EffectStateReadsGet(f.ctx, in.OperationKey)
	require.NoError(t, err)
	require.Nil(t, reads.Before, "create_work_order declares no before read")
	require.NotNil(t, reads.After)
	require.Equal(t, "GET sandbox /v1/work_orders/"+res.Observation.Receipt.ID, reads.After.Source)
	require.Contains(t, reads.After.Error, "500")
	require.Empty(t, reads.After.State)
}
