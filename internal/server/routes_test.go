package server_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin"
	mt "github.com/maestro-run/maestro/maestrotype"
)

func TestReadReturnsTheProviderRecord(t *testing.T) {
	t.Parallel()
	e := setup(t)

	resp, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.False(t, resp.Pending)
	require.Equal(t, mt.InvocationSucceeded, resp.State)
	obs := resp.Observation
	require.Equal(t, mt.StatusSuccess, obs.Status)
	require.Nil(t, obs.Receipt, "a read proves no effect")
	var tenant map[string]any
	require.NoError(t, json.Unmarshal(obs.Payload, &tenant))
	require.Equal(t, "t_100", tenant["id"])
	require.Equal(t, "lookup_tenant", obs.Source.Tool)
}

func TestRealSyncPageCarriesReceiptsReadBackFromBothProviders(t *testing.T) {
	t.Parallel()
	e := setup(t)

	resp, err := e.invoke("escalate_to_human", e.key("page"),
		`{"reason":"Water is coming through the ceiling","urgency":"emergency","callback_number":"+14155550100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	r := resp.Observation.Receipt
	require.NotNil(t, r)
	require.NotEmpty(t, r.Fields["message_sid"])
	require.NotEmpty(t, r.Fields["message_id"])
	require.Contains(t, resp.Observation.Wording, r.Fields["message_sid"], "wording is rendered from the receipt")

	// The proof is what the providers say, not what maestro recorded.
	reader := e.standins.Reader()
	sms, err := reader.TwilioMessage(r.Fields["message_sid"])
	require.NoError(t, err)
	require.Equal(t, "+15550100100", sms.Detail["to"])
	email, err := reader.SESMessage(e.ctx, r.Fields["message_id"])
	require.NoError(t, err)
	require.Equal(t, r.Fields["message_id"], email.ID)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
	require.Equal(t, 1, e.standins.SES.CountEmails())
}

func TestRealSyncSMSAutoApprovedToTheCallersOwnNumber(t *testing.T) {
	t.Parallel()
	e := setup(t)
	req := invokeRequest(e.session, "send_sms", e.key("sms"), `{"to":"+14155550100","body":"Your work order is booked."}`)
	req.SessionContext = map[string]string{"caller_number": "+14155550100"}

	resp, err := e.agent.Invoke(e.ctx, req)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	sid := resp.Observation.Receipt.Fields["message_sid"]
	msg, err := e.standins.Reader().TwilioMessage(sid)
	require.NoError(t, err)
	require.Equal(t, "Your work order is booked.", msg.Detail["body"])
	require.Equal(t, standin.TwilioFrom, msg.Detail["from"])

	apr, err := e.store.ApprovalRequestGetByKey(e.ctx, e.key("sms"))
	require.NoError(t, err)
	require.Equal(t, "rule:args.to == session.caller_number", apr.DecidedBy, "the rule is the recorded actor")
}

func TestCompensableWritePushesUndoAndCreatesTheResource(t *testing.T) {
	t.Parallel()
	e := setup(t)

	resp, err := e.invoke("create_work_order", e.key("wo"),
		`{"tenant_id":"t_100","category":"plumbing","description":"Kitchen sink leaks","priority":"urgent"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	id := resp.Observation.Receipt.ID

	wo, err := e.standins.Reader().HTTPResource(e.ctx, e.standins.SandboxURL(), e.standins.Sandbox.Token(), "/v1/work_orders/"+id)
	require.NoError(t, err)
	require.Equal(t, "open", wo.Status)

	undo, err := e.store.UndoListBySession(e.ctx, e.session)
	require.NoError(t, err)
	require.Len(t, undo, 1)
	require.Equal(t, "cancel_work_order", undo[0].CompensationTool)
	require.Equal(t, e.key("wo"), undo[0].OperationKey)

	eff, err := e.store.EffectGet(e.ctx, e.key("wo"))
	require.NoError(t, err)
	require.Equal(t, mt.EffectSucceeded, eff.Status)
	require.NotEmpty(t, eff.BeforeState, "before-state is logged with the write")
	require.NotEmpty(t, eff.AfterState)
	require.Equal(t, id, eff.Receipt.ID)
}

func TestDeferredRecordsWithoutDeliveringAnything(t *testing.T) {
	t.Parallel()
	e := setup(t)

	resp, err := e.invoke("take_message", e.key("msg"), `{"message":"Please call me about my lease renewal."}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationRecorded, resp.State)
	require.Nil(t, resp.Observation.Receipt)
	require.Equal(t, mt.CodeDeferred, resp.Observation.Code)
	require.Equal(t, "I'll make sure the team gets your message.", resp.Observation.Wording)

	items, err := e.store.DeferredListBySession(e.ctx, e.session)
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.Zero(t, e.standins.Twilio.CountMessages()+e.standins.SES.CountEmails(), "nothing is delivered in-call")
}

func TestGatedCallsWaitForApprovalAndRunNothing(t *testing.T) {
	t.Parallel()
	// Three gated calls wait side by side, which only an agent whose
	// writes may run while awaiting approval can make in one session.
	e := setup(t, withAgentPolicy("while_awaiting_approval: strict", "while_awaiting_approval: allow_writes"))

	for _, tc := range []struct{ tool, args string }{
		{"delete_tenant_account", `{"tenant_id":"t_100"}`},
		{"issue_refund", `{"tenant_id":"t_100","amount_cents":2500,"reason":"Duplicate payment"}`},
		{"send_sms", `{"to":"+14155550199","body":"Hello"}`},
	} {
		resp, err := e.invoke(tc.tool, e.key(tc.tool), tc.args)
		require.NoError(t, err)
		require.True(t, resp.Pending, tc.tool)
		require.Equal(t, mt.InvocationAwaitingApproval, resp.State, tc.tool)
		require.Equal(t, mt.StatusPending, resp.Observation.Status)
		require.Equal(t, mt.CodeAwaitingApproval, resp.Observation.Code)
		require.NotEmpty(t, resp.ApprovalID)
		require.Nil(t, resp.Observation.Receipt)

		apr, err := e.store.ApprovalRequestGet(e.ctx, resp.ApprovalID)
		require.NoError(t, err)
		require.Equal(t, tc.tool, apr.Tool)
		require.NotEmpty(t, apr.ArgsHash)
		require.NotEmpty(t, apr.ApproverRole)
	}
	tenant, ok := e.standins.Sandbox.Tenant("t_100")
	require.True(t, ok)
	require.False(t, tenant.Deleted, "nothing executes before a decision")
	require.Zero(t, e.standins.Sandbox.CountRefunds())
	require.Zero(t, e.standins.Twilio.CountMessages())
}

func TestCatalogIsMirroredToTheRegistry(t *testing.T) {
	t.Parallel()
	e := setup(t)

	rows, err := e.store.ToolRegistryList(e.ctx)
	require.NoError(t, err)
	byName := map[string]mt.Effect{}
	for _, r := range rows {
		byName[r.Name] = r.Effect
	}
	require.Equal(t, mt.EffectMoney, byName["issue_refund"])
	require.Equal(t, mt.EffectRead, byName["lookup_tenant"])
	require.Len(t, rows, 12)
}
