package console

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

func TestSafeNextStaysInTheConsole(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"/console/sessions/call-1": "/console/sessions/call-1",
		"":                         "/console/approvals",
		"https://evil.example/":    "/console/approvals",
		"//evil.example/console/":  "/console/approvals",
		"/console/\\evil":          "/console/approvals",
		"/v1/approvals":            "/console/approvals",
	} {
		require.Equal(t, want, safeNext(next), next)
	}
}

func TestArgsFromFormTypesEachFieldAsTheSchemaSays(t *testing.T) {
	t.Parallel()
	schema, err := tools.CompileSchema(json.RawMessage(`{"type":"object","required":["amount_cents","reason"],"properties":{
		"amount_cents":{"type":"integer"},"rate":{"type":"number"},"urgent":{"type":"boolean"},
		"reason":{"type":"string"},"note":{"type":"string"},"meta":{"type":"object"}}}`))
	require.NoError(t, err)
	tool := &tools.Tool{Name: "t", InputSchema: schema}
	form := url.Values{"arg.amount_cents": {" 1500 "}, "arg.rate": {"0.5"}, "arg.urgent": {"on"},
		"arg.reason": {"partial"}, "arg.note": {""}, "arg.meta": {`{"a": 1}`}}
	r := httptest.NewRequest("POST", "/", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	args, problems := argsFromForm(tool, json.RawMessage(`{"amount_cents":2500,"note":"old","extra":true}`), r)
	require.Empty(t, problems)
	require.JSONEq(t, `{"amount_cents":1500,"rate":0.5,"urgent":true,"reason":"partial","meta":{"a":1},"extra":true}`, string(args),
		"an emptied optional field is dropped; what the schema does not describe is kept")

	bad := url.Values{"arg.amount_cents": {"12.5"}, "arg.rate": {"x"}, "arg.reason": {"r"}, "arg.meta": {"{"}}
	r = httptest.NewRequest("POST", "/", strings.NewReader(bad.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, problems = argsFromForm(tool, nil, r)
	require.Equal(t, []string{"amount_cents: must be a whole number", "meta: must be JSON", "rate: must be a number"}, problems)
}

func TestDiffMarksWhatChanged(t *testing.T) {
	t.Parallel()
	usd, err := tools.ParseCurrency("USD")
	require.NoError(t, err)
	rows := diff(json.RawMessage(`{"a":1,"b":"x","gone":true,"cents":2500}`), json.RawMessage(`{"a":1.0,"b":"y","new":[1],"cents":1500}`),
		map[string]tools.Currency{"cents": usd, "b": usd})
	require.Equal(t, []diffRow{
		{Name: "a", Before: argValue{Raw: "1"}, After: argValue{Raw: "1.0"}},
		{Name: "b", Before: argValue{Raw: "x"}, After: argValue{Raw: "y"}, Changed: true},
		{Name: "cents", Before: argValue{Raw: "2500", Money: "$25.00"}, After: argValue{Raw: "1500", Money: "$15.00"}, Changed: true},
		{Name: "gone", Before: argValue{Raw: "true"}, Changed: true},
		{Name: "new", After: argValue{Raw: "[1]"}, Changed: true},
	}, rows, "a money field shows its amount; a value that is no whole number is shown as it is")
}
