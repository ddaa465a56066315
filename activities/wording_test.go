package activities_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// brokenWordingCatalog is the demo catalog with success wordings that load
// but fail when they render: the provider's answer has no such field.
func brokenWordingCatalog(t *testing.T) []byte {
	t.Helper()
	cat := tools.DemoCatalogYAML
	for old, broken := range map[string]string{
		`success: "Here is what I found for tenant {{.Args.tenant_id}}."`:                        `success: "Tenant {{.Args.tenant_id}} owes {{.Payload.no_such_field}}."`,
		`success: "I've created work order {{.Receipt.ID}}; its status is {{.Receipt.Status}}."`: `success: "I've created work order {{.Receipt.ID}} for {{.Payload.no_such_field}}."`,
	} {
		require.True(t, bytes.Contains(cat, []byte(old)), "the demo catalog changed: %s", old)
		cat = bytes.Replace(cat, []byte(old), []byte(broken), 1)
	}
	return cat
}

// invocation records an admitted invocation, as admission would.
func (f *fixture) invocation(tool string, route mt.Route, rawArgs string) workflows.ExecuteInput {
	f.t.Helper()
	f.n++
	args, hash, err := approval.Canonicalize(json.RawMessage(rawArgs))
	require.NoError(f.t, err)
	key := "s1:" + tool + "-" + string(rune('a'+f.n))
	inv, _, err := f.store.InvocationInsert(f.ctx, ledger.Invocation{OperationKey: key, SessionID: "s1", AgentID: "voice-agent",
		Tool: tool, Args: args, ArgsHash: hash, Route: route, State: mt.InvocationRunning, WorkflowID: "wf-" + key})
	require.NoError(f.t, err)
	return workflows.ExecuteInput{InvocationID: inv.ID, OperationKey: key, SessionID: "s1", Tool: tool,
		Route: route, Args: args, ArgsHash: hash}
}

func TestBrokenSuccessWordingStillSettlesTheReceipt(t *testing.T) {
	t.Parallel()
	f := setupCatalog(t, brokenWordingCatalog(t))
	in := f.invocation("create_work_order", mt.RouteCompensable,
		`{"tenant_id":"t_100","category":"plumbing","description":"Leaking tap","priority":"routine"}`)

	res, err := f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State, "%+v", res.Observation)
	require.Equal(t, 1, f.standins.Sandbox.CountWorkOrders())
	require.NotNil(t, res.Observation.Receipt)
	id := res.Observation.Receipt.ID
	require.NotEmpty(t, id)
	require.Equal(t, "The provider accepted the request; the reference is "+id+".", res.Observation.Wording)
	require.False(t, tools.PromisesDelivery(res.Observation.Wording), "the fallback claims nothing beyond the receipt")

	eff, err := f.store.EffectGet(f.ctx, in.OperationKey)
	require.NoError(t, err)
	require.Equal(t, mt.EffectSucceeded, eff.Status)
	require.NotNil(t, eff.Receipt)
	require.Equal(t, id, eff.Receipt.ID)
	inv, err := f.store.InvocationGet(f.ctx, in.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, inv.State)
	require.Equal(t, res.Observation.Wording, inv.Observation.Wording)

	// A retry finds the key settled and sends nothing again.
	res, err = f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State)
	require.Equal(t, 1, f.standins.Sandbox.CountWorkOrders())
}

func TestBrokenReadWordingStillAnswers(t *testing.T) {
	t.Parallel()
	f := setupCatalog(t, brokenWordingCatalog(t))
	in := f.invocation("lookup_tenant", mt.RouteRead, `{"tenant_id":"t_100"}`)

	res, err := f.execute(in)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State, "%+v", res.Observation)
	require.Equal(t, "Here is what I found.", res.Observation.Wording)
	require.NotEmpty(t, res.Observation.Payload)
	inv, err := f.store.InvocationGet(f.ctx, in.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, inv.State)
}
