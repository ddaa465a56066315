package platform_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/platform"
	"github.com/maestro-run/maestro/tools"
)

// Vapi lists a message's calls three ways; each is read, in call order,
// with arguments sent as an object or a JSON string.
func TestVapiToolCallsAsDocumented(t *testing.T) {
	t.Parallel()
	type want struct{ id, name, args string }
	for _, tc := range []struct {
		file   string
		calls  []want
		call   platform.Call
		errs   []bool
		ctlURL string
	}{
		{file: "vapi_tool_calls.json", calls: []want{
			{"call_sms_1", "send_sms", `{"to":"+14155550100","body":"Your work order is booked."}`},
			{"call_msg_1", "take_message", `{"message":"Please renew my parking permit."}`},
		}, call: platform.Call{ID: "8b3c2a1e-5f6d-4e7a-9b8c-0d1e2f3a4b5c", Signed: map[string]string{
			tools.SignedCallerNumber: "+14155550100", tools.SignedCalledNumber: "+14155550199",
			tools.SignedCallSID: "CA0123456789abcdef0123456789abcdef"}},
			errs:   []bool{false, false},
			ctlURL: "https://phone-call-websocket.aws-us-west-2-backend-production1.vapi.ai/8b3c/control"},
		{file: "vapi_tool_calls_with_tool_list.json", calls: []want{
			{"toolu_01DTPAzUm5Gk3zxrpJ969oMF", "take_message", `{"message":"Please renew my parking permit."}`},
		}, call: platform.Call{ID: "call-web-1", Signed: map[string]string{}}, errs: []bool{false}},
		{file: "vapi_tool_calls_model_list.json", calls: []want{
			{"call_a", "send_sms", `{"to":"+14155550100","body":"Booked."}`},
			{"call_b", "lookup_tenant", ""},
			{"call_c", "take_message", `{}`},
		}, call: platform.Call{ID: "call-2", Signed: map[string]string{
			tools.SignedCallerNumber: "+14155550100", tools.SignedCalledNumber: "+14155550199"}},
			errs: []bool{false, true, false}},
	} {
		msg, err := platform.ParseVapi(fixture(t, tc.file))
		require.NoError(t, err, tc.file)
		require.Equal(t, platform.VapiToolCalls, msg.Type)
		require.Equal(t, tc.call, msg.CallInfo(), tc.file)
		require.Equal(t, tc.ctlURL, msg.ControlURL(), tc.file)
		calls, errs := msg.ToolCalls()
		require.Len(t, calls, len(tc.calls), tc.file)
		for i, w := range tc.calls {
			require.Equal(t, w.id, calls[i].ID, tc.file)
			require.Equal(t, w.name, calls[i].Name, tc.file)
			if tc.errs[i] {
				require.Error(t, errs[i], "%s: call %d", tc.file, i)
				continue
			}
			require.NoError(t, errs[i], tc.file)
			require.JSONEq(t, w.args, string(calls[i].Args), "%s: call %d", tc.file, i)
		}
	}
}

// An end-of-call report's transcript is the caller's and the agent's turns,
// timed; system and tool messages are left out.
func TestVapiEndOfCallReportAsDocumented(t *testing.T) {
	t.Parallel()
	msg, err := platform.ParseVapi(fixture(t, "vapi_end_of_call_report.json"))
	require.NoError(t, err)
	require.Equal(t, platform.VapiEndOfCallReport, msg.Type)
	require.Equal(t, "+14155550100", msg.CallInfo().Signed[tools.SignedCallerNumber])
	tr := msg.Transcript()
	require.Len(t, tr.Turns, 2)
	require.Equal(t, "agent", tr.Turns[0].Speaker)
	require.Equal(t, "caller", tr.Turns[1].Speaker)
	require.Equal(t, "Please call me back tomorrow.", tr.Turns[1].Text)
	require.Equal(t, int64(1767225604000), tr.Turns[1].At.UnixMilli())

	_, err = platform.ParseVapi([]byte(`{"message":{"call":{"id":"c"}}}`))
	require.ErrorContains(t, err, "message.type is missing")
	_, err = platform.ParseVapi([]byte(`{"message":`))
	require.ErrorContains(t, err, "error reading Vapi message")
}

// The answer is {"results": [{"toolCallId", "result"}]}, or "error" in
// place of "result", on one line each, in call order.
func TestVapiResultsShape(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(platform.VapiResults{Results: []platform.VapiResult{
		{ToolCallID: "call_a", Result: platform.OneLine("I've sent the text.\n  It says: Booked.")},
		{ToolCallID: "call_b", Error: platform.OneLine("error reading arguments:\tnot JSON")},
	}})
	require.NoError(t, err)
	require.JSONEq(t, `{"results":[{"toolCallId":"call_a","result":"I've sent the text. It says: Booked."},
		{"toolCallId":"call_b","error":"error reading arguments: not JSON"}]}`, string(raw))
}
