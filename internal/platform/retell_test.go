package platform_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/platform"
	"github.com/maestro-run/maestro/tools"
)

// A custom function call carries {name, call, args}, args an object; the
// call's numbers and Twilio SID are what Retell signs.
func TestRetellFunctionAsDocumented(t *testing.T) {
	t.Parallel()
	fn, err := platform.ParseRetellFunction(fixture(t, "retell_function.json"))
	require.NoError(t, err)
	require.Equal(t, "send_sms", fn.Name)
	require.JSONEq(t, `{"to":"+14155550100","body":"Your work order is booked."}`, string(fn.Args))
	require.Equal(t, platform.Call{ID: "Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6", Signed: map[string]string{
		tools.SignedCallerNumber: "+14155550100", tools.SignedCalledNumber: "+14155550199",
		tools.SignedCallSID: "CA0123456789abcdef0123456789abcdef"}}, fn.Call.CallInfo())

	fn, err = platform.ParseRetellFunction([]byte(`{"name":"take_message","call":{"call_id":"c1"},"args":"{\"message\":\"hi\"}"}`))
	require.NoError(t, err, "arguments as a JSON string are read too")
	require.JSONEq(t, `{"message":"hi"}`, string(fn.Args))
	fn, err = platform.ParseRetellFunction([]byte(`{"name":"lookup_tenant","call":{"call_id":"c1"}}`))
	require.NoError(t, err)
	require.JSONEq(t, `{}`, string(fn.Args), "no arguments are {}")

	for body, want := range map[string]string{
		`{"to":"+14155550100","body":"args only"}`:               `turn off "args only"`,
		`{"name":"send_sms","args":{}}`:                          "call.call_id are required",
		`{"name":"send_sms","call":{"call_id":"c"},"args":"{x"}`: "error reading arguments",
		`[]`: "error reading the function call",
	} {
		_, err := platform.ParseRetellFunction([]byte(body))
		require.ErrorContains(t, err, want, body)
		var badArgs *platform.ArgumentsError
		require.Equal(t, want == "error reading arguments", errors.As(err, &badArgs), "only the model's arguments are the model's to mend: %s", body)
	}
}

// Webhooks carry {event, call}: call_ended and call_analyzed end the call
// with its timed transcript; call_started is read and left alone; a web
// call signs no numbers.
func TestRetellWebhooksAsDocumented(t *testing.T) {
	t.Parallel()
	ev, err := platform.ParseRetellWebhook(fixture(t, "retell_call_started.json"))
	require.NoError(t, err)
	require.Equal(t, "call_started", ev.Event)

	ev, err = platform.ParseRetellWebhook(fixture(t, "retell_call_ended.json"))
	require.NoError(t, err)
	require.Equal(t, platform.RetellCallEnded, ev.Event)
	require.Equal(t, "+14155550100", ev.Call.CallInfo().Signed[tools.SignedCallerNumber])
	tr := ev.Call.Turns()
	require.Len(t, tr.Turns, 2)
	require.Equal(t, "caller", tr.Turns[1].Speaker)
	require.Equal(t, int64(1767225603100), tr.Turns[1].At.UnixMilli(), "the call's start plus the first word's")

	ev, err = platform.ParseRetellWebhook(fixture(t, "retell_call_analyzed_web.json"))
	require.NoError(t, err)
	require.Equal(t, platform.RetellCallAnalyzed, ev.Event)
	require.Equal(t, platform.Call{ID: "Web9TXYYJHfvl6Syypi88rdAHYHmcq6", Signed: map[string]string{}}, ev.Call.CallInfo())
	require.Len(t, ev.Call.Turns().Turns, 1)

	_, err = platform.ParseRetellWebhook([]byte(`{"event":"call_ended","call":{}}`))
	require.ErrorContains(t, err, "event and call.call_id are required")
}
