package tools_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func demo(t *testing.T) *tools.Catalog {
	t.Helper()
	c, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	return c
}

func TestDemoCatalogHasEveryClass(t *testing.T) {
	t.Parallel()
	c := demo(t)

	effects := map[maestrotype.Effect]bool{}
	deliveries := map[maestrotype.Delivery]bool{}
	reversibilities := map[maestrotype.Reversibility]bool{}
	routes := map[maestrotype.Route]bool{}
	kinds := map[maestrotype.ConnectorKind]bool{}
	for _, tool := range c.Tools() {
		effects[tool.Effect] = true
		deliveries[tool.Delivery] = true
		reversibilities[tool.Reversibility] = true
		routes[tool.Route()] = true
		kinds[tool.Connector.Kind] = true
	}
	require.Equal(t, map[maestrotype.Effect]bool{"read": true, "write": true, "money": true}, effects)
	require.Equal(t, map[maestrotype.Delivery]bool{"readonly": true, "real-sync": true, "record-deferred": true}, deliveries)
	require.Equal(t, map[maestrotype.Reversibility]bool{"none": true, "compensable": true, "irreversible": true}, reversibilities)
	require.Equal(t, map[maestrotype.Route]bool{"read": true, "compensable": true, "gated": true, "deferred": true}, routes)
	require.Equal(t, map[maestrotype.ConnectorKind]bool{"http": true, "twilio_sms": true, "ses_email": true, "page": true, "deferred": true}, kinds)
}

func TestDemoCatalogRows(t *testing.T) {
	t.Parallel()
	c := demo(t)

	names := make([]string, 0)
	for _, tool := range c.Tools() {
		names = append(names, tool.Name)
	}
	require.True(t, slices.IsSorted(names))
	require.Equal(t, []string{
		"cancel_refund", "cancel_work_order", "create_work_order", "delete_tenant_account",
		"deliver_message", "email_property_manager", "escalate_to_human", "issue_refund",
		"lookup_tenant", "request_callback", "send_sms", "take_message",
	}, names)

	refund, ok := c.Tool("issue_refund")
	require.True(t, ok)
	require.Equal(t, maestrotype.RouteGated, refund.Route())
	require.Equal(t, "manager", refund.Approval.ApproverRole)
	require.Equal(t, tools.OnTimeoutTimedOut, refund.Approval.OnTimeout)
	require.Equal(t, "cancel_refund", refund.Compensation.Tool)
	require.Equal(t, 1, refund.Compensation.Version, "compensation version resolves to the target's")

	sms, _ := c.Tool("send_sms")
	require.Equal(t, "args.to == session.caller_number", sms.Approval.AutoApproveWhen)
	require.False(t, sms.Approval.AutoApproveOnTimeout())
	require.True(t, (&tools.Approval{OnTimeout: tools.OnTimeoutAutoApprove}).AutoApproveOnTimeout())

	lookup, _ := c.Tool("lookup_tenant")
	require.Nil(t, lookup.Approval, "reads are never gated")
	require.False(t, lookup.Approval.AutoApproveOnTimeout())
	require.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["tenant_id"],"properties":{"tenant_id":{"type":"string","pattern":"^t_[0-9]+$","description":"tenant ID","examples":["t_1001"]}}}`,
		string(lookup.InputSchema.JSON()))
	require.Equal(t, []string{"message_sid", "status"}, sms.ReceiptFields)

	_, ok = c.Tool("transfer_call")
	require.False(t, ok, "a tool absent from the catalog does not exist")
}

func TestDemoCompensationArgsFitTheirTool(t *testing.T) {
	t.Parallel()
	c := demo(t)
	for _, tool := range c.Tools() {
		if tool.Compensation == nil {
			continue
		}
		target, ok := c.Tool(tool.Compensation.Tool)
		require.True(t, ok)
		args, err := tool.Compensation.RenderArgs(tools.TemplateData{Receipt: receiptFor(tool)})
		require.NoError(t, err)
		require.NoError(t, target.ValidateArgs(args), "%s undoes %s", target.Name, tool.Name)
	}
}

func TestAgentsAndOperators(t *testing.T) {
	t.Parallel()
	c := demo(t)

	agent, ok := c.AgentByKey("demo-agent-key")
	require.True(t, ok)
	require.Equal(t, "voice-agent", agent.ID)
	require.True(t, agent.Allows("issue_refund"))
	require.False(t, agent.Allows("cancel_refund"), "compensations are run by rollback, not chosen by the model")
	require.False(t, agent.Allows("transfer_call"))

	byID, ok := c.Agent("voice-agent")
	require.True(t, ok)
	require.Same(t, agent, byID)

	for _, key := range []string{"", "demo-agent-key ", "demo-ops-key"} {
		_, ok := c.AgentByKey(key)
		require.False(t, ok, "key %q", key)
	}

	op, ok := c.OperatorByKey("demo-ops-key")
	require.True(t, ok)
	require.Equal(t, "demo-manager", op.ID)
	require.True(t, op.HasRole("manager"))
	require.True(t, op.HasRole("ops"))
	require.True(t, op.HasRole("admin"), "the demo's one operator also decrypts payloads and reloads the catalog")
	require.False(t, op.HasRole("auditor"))
	_, ok = c.OperatorByKey("demo-agent-key")
	require.False(t, ok, "an agent key never opens the ops side")

	require.Equal(t, "8cfbbed0d818a803eddf3db2193bd492460b2db9999d03775a023dd8f90d04a6", tools.HashKey("demo-agent-key"))
}

func TestRegistryRows(t *testing.T) {
	t.Parallel()
	c := demo(t)
	sum := sha256.Sum256(tools.DemoCatalogYAML)
	require.Equal(t, hex.EncodeToString(sum[:]), c.Hash())

	rows := c.RegistryRows()
	require.Len(t, rows, len(c.Tools()))
	i := slices.IndexFunc(rows, func(r tools.RegistryRow) bool { return r.Name == "create_work_order" })
	require.Equal(t, tools.RegistryRow{
		Name:             "create_work_order",
		Effect:           maestrotype.EffectWrite,
		Delivery:         maestrotype.DeliveryRealSync,
		Reversibility:    maestrotype.ReversibilityCompensable,
		CompensationTool: "cancel_work_order",
		ConnectorKind:    maestrotype.KindHTTP,
		Owner:            "maintenance",
		CatalogHash:      c.Hash(),
	}, rows[i])
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(path, tools.DemoCatalogYAML, 0o600))
	c, err := tools.LoadFile(path)
	require.NoError(t, err)
	require.Len(t, c.Tools(), 12)

	_, err = tools.LoadFile(filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorContains(t, err, "error reading tool catalog")
}

// receiptFor fabricates a receipt carrying every field tool declares.
func receiptFor(tool *tools.Tool) *maestrotype.Receipt {
	r := &maestrotype.Receipt{Provider: "test", ID: "id_1", Status: "ok", Fields: map[string]string{}}
	for _, f := range tool.ReceiptFields {
		r.Fields[f] = f + "_1"
	}
	return r
}
