package tools_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

func TestValidateArgs(t *testing.T) {
	t.Parallel()
	c := demo(t)
	cases := []struct {
		name string
		tool string
		args string
		// want maps each violated field (a JSON pointer) to its hint; nil
		// means the arguments are valid.
		want map[string]string
	}{
		{"valid", "send_sms", `{"to":"+15551234567","body":"hi"}`, nil},
		{"keys in any order, any spacing", "send_sms", "{ \"body\" : \"hi\",\n \"to\":\"+15551234567\" }", nil},
		{"missing field", "send_sms", `{"body":"hi"}`, map[string]string{
			"/to": "`to` is required (E.164, e.g. +15551234567)",
		}},
		{"wrong pattern", "send_sms", `{"to":"555-1234","body":"hi"}`, map[string]string{
			"/to": "`to` must match ^\\+[1-9][0-9]{7,14}$ (E.164, e.g. +15551234567)",
		}},
		{"extra field", "send_sms", `{"to":"+15551234567","body":"hi","from":"+15550000000"}`, map[string]string{
			"/from": "`from` is not an accepted argument; accepted: body, to",
		}},
		{"every problem at once", "send_sms", `{"to":"555","cc":"x"}`, map[string]string{
			"/body": "`body` is required (the text to send, at most 480 characters)",
			"/cc":   "`cc` is not an accepted argument; accepted: body, to",
			"/to":   "`to` must match ^\\+[1-9][0-9]{7,14}$ (E.164, e.g. +15551234567)",
		}},
		{"wrong type", "issue_refund", `{"tenant_id":"t_1","amount_cents":"12.50","reason":"double charge"}`, map[string]string{
			"/amount_cents": "`amount_cents` must be an integer, not a string (the amount in US cents, at most 50000, e.g. 12500)",
		}},
		{"fraction is not an integer", "issue_refund", `{"tenant_id":"t_1","amount_cents":12.5,"reason":"double charge"}`, map[string]string{
			"/amount_cents": "`amount_cents` must be an integer, not a number (the amount in US cents, at most 50000, e.g. 12500)",
		}},
		{"over the maximum", "issue_refund", `{"tenant_id":"t_1","amount_cents":50001,"reason":"double charge"}`, map[string]string{
			"/amount_cents": "`amount_cents` must be at most 50000, not 50001 (the amount in US cents, at most 50000, e.g. 12500)",
		}},
		{"not in enum", "escalate_to_human", `{"reason":"leak","urgency":"asap","callback_number":"+15551234567"}`, map[string]string{
			"/urgency": "`urgency` must be one of routine, urgent, emergency",
		}},
		{"empty string", "take_message", `{"message":""}`, map[string]string{
			"/message": "`message` must be at least 1 characters long, not 0 (the message in the caller's words)",
		}},
		{"malformed JSON", "send_sms", `{"to":`, map[string]string{
			"": "arguments must be one JSON object (unexpected EOF); send {} when there are none",
		}},
		{"trailing data", "send_sms", `{"to":"+15551234567","body":"hi"} {}`, map[string]string{
			"": "arguments must be one JSON object (invalid character after top-level value); send {} when there are none",
		}},
		{"not an object", "send_sms", `["+15551234567","hi"]`, map[string]string{
			"": "arguments must be a JSON object, not an array",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tool, ok := c.Tool(tc.tool)
			require.True(t, ok)
			err := tool.ValidateArgs(json.RawMessage(tc.args))
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			var ae *tools.ArgsError
			require.True(t, errors.As(err, &ae), "got %v", err)
			require.Equal(t, tc.tool, ae.Tool)
			got := make(map[string]string)
			for _, v := range ae.Violations {
				got[v.Field] = v.Hint
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestValidateArgsWithoutSchemaRefuses(t *testing.T) {
	t.Parallel()
	tool := &tools.Tool{Name: "hand_built"}
	err := tool.ValidateArgs(json.RawMessage(`{}`))
	require.Error(t, err)
	var ae *tools.ArgsError
	require.False(t, errors.As(err, &ae), "a missing schema is the catalog's fault, not the agent's")
}

func TestCompileSchema(t *testing.T) {
	t.Parallel()
	s, err := tools.CompileSchema(json.RawMessage(`{"type":"object","properties":{"email":{"type":"string","format":"email"}}}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"object","properties":{"email":{"type":"string","format":"email"}}}`, string(s.JSON()))

	tool := &tools.Tool{Name: "mail", InputSchema: s}
	require.NoError(t, tool.ValidateArgs(json.RawMessage(`{"email":"pm@example.com"}`)))
	require.Error(t, tool.ValidateArgs(json.RawMessage(`{"email":"not an address"}`)), "formats are asserted")

	_, err = tools.CompileSchema(json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"https://example.com/x.json"}}}`))
	require.ErrorContains(t, err, "not allowed", "a catalog cannot make the service fetch documents")

	_, err = tools.CompileSchema(json.RawMessage(`{"type":"array"}`))
	require.ErrorContains(t, err, "type: object")
}

func TestSchemaFieldsDescribeTopLevelArguments(t *testing.T) {
	t.Parallel()
	s, err := tools.CompileSchema(json.RawMessage(`{"type":"object","required":["amount_cents"],"properties":{
		"amount_cents":{"type":"integer","minimum":1,"maximum":50000,"description":"in cents"},
		"reason":{"type":"string","minLength":1,"maxLength":500,"pattern":"^.+$"},
		"kind":{"type":"string","enum":["full","partial"]},
		"meta":{"type":"object"}}}`))
	require.NoError(t, err)
	require.Equal(t, []tools.Field{
		{Name: "amount_cents", Description: "in cents", Type: "integer", Required: true, Minimum: "1", Maximum: "50000"},
		{Name: "kind", Type: "string", Enum: []string{"full", "partial"}},
		{Name: "meta"},
		{Name: "reason", Type: "string", Pattern: "^.+$", MinLength: 1, MaxLength: 500},
	}, s.Fields())
	require.Nil(t, (*tools.Schema)(nil).Fields())
}
