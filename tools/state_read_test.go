package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func loadStateReadDoc(t *testing.T, d catalogDoc) (*tools.Catalog, error) {
	t.Helper()
	data, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)
	return tools.Load(data)
}

func lookupRead(id string) map[string]any {
	return map[string]any{"tool": "lookup", "args": map[string]any{"id": id}}
}

func TestStateReadsLoadAndRender(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	d.tool("refund")["before"] = lookupRead("{{.Args.cents}}")
	d.tool("refund")["after"] = map[string]any{"get": "/refunds/{{pathescape .Receipt.ID}}"}
	c, err := loadStateReadDoc(t, d)
	require.NoError(t, err)
	refund, ok := c.Tool("refund")
	require.True(t, ok)
	require.Equal(t, "lookup", refund.Before.Tool)

	// The before read calls the read tool's own connector with arguments
	// rendered from the write's.
	before, err := refund.Before.Render(refund, tools.TemplateData{Args: map[string]any{"cents": json.Number("1500")}})
	require.NoError(t, err)
	require.Equal(t, "tool lookup", before.Source)
	require.JSONEq(t, `{"id":"1500"}`, string(before.Args))
	require.Equal(t, map[string]string{"service": "api", "method": "GET", "path": "/tenants/1500"}, before.Call.Settings)

	// The after read-back is a GET on the write's service, from its receipt.
	after, err := refund.After.Render(refund, tools.TemplateData{Args: map[string]any{"cents": json.Number("1500")}, Receipt: &maestrotype.Receipt{ID: "re 1"}})
	require.NoError(t, err)
	require.Equal(t, "GET api /refunds/re%201", after.Source)
	require.Equal(t, map[string]string{"service": "api", "method": "GET", "path": "/refunds/re%201"}, after.Call.Settings)
	require.Nil(t, after.Call.Body)
}

func TestDemoDeleteReadsTheTenantAroundIt(t *testing.T) {
	t.Parallel()
	del, ok := demo(t).Tool("delete_tenant_account")
	require.True(t, ok)
	require.NotNil(t, del.Before)
	require.NotNil(t, del.After)
	call, err := del.Before.Render(del, tools.TemplateData{Args: map[string]any{"tenant_id": "t_100"}})
	require.NoError(t, err)
	require.Equal(t, "GET", call.Call.Settings["method"])
	require.Equal(t, "/v1/tenants/t_100", call.Call.Settings["path"])
}

func TestStateReadRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(d catalogDoc)
		row    string
		field  string
	}{
		{"on a read tool", func(d catalogDoc) { d.tool("lookup")["before"] = lookupRead("{{.Args.id}}") }, `tools[0] "lookup"`, "before"},
		{"on a deferred tool", func(d catalogDoc) { d.tool("note")["after"] = lookupRead("x") }, `tools[5] "note"`, "after"},
		{"unknown read tool", func(d catalogDoc) {
			d.tool("refund")["before"] = map[string]any{"tool": "lookups", "args": map[string]any{"id": "x"}}
		}, `tools[4] "refund"`, "before.tool"},
		{"read tool with side effects", func(d catalogDoc) {
			d.tool("refund")["before"] = map[string]any{"tool": "notify", "args": map[string]any{"to": "x", "body": "y"}}
		}, `tools[4] "refund"`, "before.tool"},
		{"field the write does not take", func(d catalogDoc) { d.tool("refund")["before"] = lookupRead("{{.Args.tenant}}") }, `tools[4] "refund"`, "before.args.id"},
		{"field that can be absent", func(d catalogDoc) { d.tool("book")["before"] = lookupRead("{{.Args.when}}") }, `tools[2] "book"`, "before.args.id"},
		{"argument the read tool does not take", func(d catalogDoc) {
			d.tool("refund")["before"] = map[string]any{"tool": "lookup", "args": map[string]any{"id": "x", "other": "y"}}
		}, `tools[4] "refund"`, "before.args.other"},
		{"read tool's required argument missing", func(d catalogDoc) {
			d.tool("refund")["before"] = map[string]any{"tool": "lookup", "args": map[string]any{}}
		}, `tools[4] "refund"`, "before.args"},
		{"receipt before the effect", func(d catalogDoc) {
			d.tool("refund")["before"] = map[string]any{"get": "/refunds/{{.Receipt.ID}}"}
		}, `tools[4] "refund"`, "before.get"},
		{"payload in the read-back", func(d catalogDoc) {
			d.tool("refund")["after"] = map[string]any{"get": "/refunds/{{.Payload.id}}"}
		}, `tools[4] "refund"`, "after.get"},
		{"both a tool and a get", func(d catalogDoc) {
			d.tool("refund")["after"] = map[string]any{"tool": "lookup", "args": map[string]any{"id": "x"}, "get": "/x"}
		}, `tools[4] "refund"`, "after"},
		{"neither a tool nor a get", func(d catalogDoc) { d.tool("refund")["after"] = map[string]any{} }, `tools[4] "refund"`, "after"},
		{"get on a connector that is not HTTP", func(d catalogDoc) {
			d.tool("notify")["after"] = map[string]any{"get": "/messages"}
		}, `tools[1] "notify"`, "after.get"},
		{"broken template", func(d catalogDoc) { d.tool("refund")["before"] = lookupRead("{{.Args.cents") }, `tools[4] "refund"`, "before.args.id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := minimalDoc(t)
			tc.mutate(d)
			_, err := loadStateReadDoc(t, d)
			require.Error(t, err)
			for _, p := range fieldErrors(err) {
				if p.Row == tc.row && p.Field == tc.field {
					return
				}
			}
			require.Failf(t, "refusal does not name the row and field", "want %s: %s, got:\n%v", tc.row, tc.field, err)
		})
	}
}

func TestStateReadRefusalsSayWhy(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	d.tool("refund")["before"] = map[string]any{"tool": "notify", "args": map[string]any{"to": "x", "body": "y"}}
	d.tool("refund")["after"] = lookupRead("{{.Args.tenant}}")
	_, err := loadStateReadDoc(t, d)
	require.ErrorContains(t, err, `tools[4] "refund": before.tool: notify is not a read (effect write, kind twilio_sms): a before read must have no side effects`)
	require.ErrorContains(t, err, `tools[4] "refund": after.args.id: reads .Args.tenant, which input_schema does not declare (it declares cents)`)

	d = minimalDoc(t)
	d.tool("refund")["before"] = map[string]any{"tool": "lookup", "argz": map[string]any{"id": "x"}}
	_, err = loadStateReadDoc(t, d)
	require.ErrorContains(t, err, "field argz not found")
}
