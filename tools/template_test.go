package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func TestTemplateReferences(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want bool
	}{
		{"Sent as {{.Receipt.ID}}.", true},
		{"{{with .Receipt}}Sent as {{.ID}}.{{end}}", true},
		{"{{if .Receipt}}ok{{end}}", true},
		{"{{range .Args.items}}{{$.Receipt.Status}}{{end}}", true},
		{"{{pathescape .Receipt.ID}}", true},
		{"{{with .Args}}{{.Receipt}}{{end}}", false},
		{"Done, I've sent it.", false},
		{"{{.Args.receipt}}", false},
	}
	for _, tc := range cases {
		tmpl, err := tools.ParseTemplate("t", tc.src)
		require.NoError(t, err)
		require.Equal(t, tc.want, tmpl.References("Receipt"), tc.src)
	}
}

func TestTemplateExecute(t *testing.T) {
	t.Parallel()
	tmpl := tools.MustParseTemplate("t", "{{.Args.to}} {{.Session.caller_number}} {{.OperationKey}}")
	got, err := tmpl.Execute(tools.TemplateData{
		Args:         map[string]any{"to": "+15551234567"},
		Session:      map[string]any{"caller_number": "+15557654321"},
		OperationKey: "op-1",
	})
	require.NoError(t, err)
	require.Equal(t, "+15551234567 +15557654321 op-1", got)

	_, err = tmpl.Execute(tools.TemplateData{Args: map[string]any{}})
	require.Error(t, err, "a missing key is an error, never <no value>")

	_, err = tools.MustParseTemplate("t", "{{.Receipt.ID}}").Execute(tools.TemplateData{})
	require.Error(t, err, "a template cannot read a receipt that does not exist")

	require.Equal(t, "{{.Args.to}}", tools.MustParseTemplate("t", "{{.Args.to}}").String())
	require.Panics(t, func() { tools.MustParseTemplate("t", "{{") })
}

func TestDecodeArgsKeepsNumbersExact(t *testing.T) {
	t.Parallel()
	args, err := tools.DecodeArgs(json.RawMessage(`{"amount_cents": 12345678901234567890, "ratio": 0.1}`))
	require.NoError(t, err)
	got, err := tools.MustParseTemplate("t", "{{.Args.amount_cents}} {{.Args.ratio}}").Execute(tools.TemplateData{Args: args})
	require.NoError(t, err)
	require.Equal(t, "12345678901234567890 0.1", got)

	for _, bad := range []string{`null`, `[]`, `{"a":1} {}`, `{`} {
		_, err := tools.DecodeArgs(json.RawMessage(bad))
		require.Error(t, err, bad)
	}
}

func TestRenderCall(t *testing.T) {
	t.Parallel()
	c := demo(t)

	cancel, _ := c.Tool("cancel_work_order")
	call, err := cancel.RenderCall(tools.TemplateData{Args: map[string]any{"work_order_id": "wo/1"}})
	require.NoError(t, err)
	require.Equal(t, maestrotype.KindHTTP, call.Kind)
	require.Equal(t, map[string]string{
		"service": "sandbox",
		"method":  "POST",
		"path":    "/v1/work_orders/wo%2F1/cancel",
	}, call.Settings, "arguments stay inside their path segment")
	require.JSONEq(t, `{}`, string(call.Body))

	refund, _ := c.Tool("issue_refund")
	args, err := tools.DecodeArgs(json.RawMessage(`{"tenant_id":"t_1","amount_cents":12500,"reason":"double charge"}`))
	require.NoError(t, err)
	call, err = refund.RenderCall(tools.TemplateData{Args: args})
	require.NoError(t, err)
	require.JSONEq(t, `{"tenant_id":"t_1","amount_cents":12500,"reason":"double charge"}`, string(call.Body), "arguments keep their JSON types")

	sms, _ := c.Tool("send_sms")
	call, err = sms.RenderCall(tools.TemplateData{Args: map[string]any{"to": "+15551234567", "body": "hi"}})
	require.NoError(t, err)
	require.Equal(t, tools.ConnectorCall{Kind: maestrotype.KindTwilioSMS, Settings: map[string]string{"to": "+15551234567", "body": "hi"}}, call)

	for _, name := range []string{"lookup_tenant", "delete_tenant_account"} {
		tool, _ := c.Tool(name)
		call, err := tool.RenderCall(tools.TemplateData{Args: map[string]any{"tenant_id": "t_1"}})
		require.NoError(t, err)
		require.Nil(t, call.Body, "%s sends no body", name)
	}

	_, err = sms.RenderCall(tools.TemplateData{Args: map[string]any{"to": "+15551234567"}})
	require.Error(t, err, "a missing argument fails the render, never sends <no value>")
}

func TestConnectorEffects(t *testing.T) {
	t.Parallel()
	c := demo(t)
	cases := map[string]struct {
		effect  bool
		receipt []string
		proof   []string
	}{
		"lookup_tenant":          {false, nil, nil},
		"take_message":           {false, nil, nil},
		"send_sms":               {true, []string{"message_sid", "status"}, []string{"message_sid"}},
		"email_property_manager": {true, []string{"message_id"}, []string{"message_id"}},
		"escalate_to_human":      {true, []string{"message_sid", "message_id", "status"}, []string{"message_sid", "message_id"}},
		"create_work_order":      {true, []string{"resource_id", "status"}, []string{"resource_id"}},
	}
	for name, want := range cases {
		tool, _ := c.Tool(name)
		require.Equal(t, want.effect, tool.Connector.PerformsEffect(), name)
		require.Equal(t, want.receipt, tool.Connector.ReceiptFields(), name)
		require.Equal(t, want.proof, tool.Connector.ProofFields(), name)
	}
	require.False(t, tools.Connector{Kind: "noop"}.PerformsEffect(), "an unknown kind proves nothing")
	require.False(t, maestrotype.ConnectorKind("noop").Valid())
}
