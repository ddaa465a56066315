package platform_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/platform"
	"github.com/maestro-run/maestro/tools"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// A post-call webhook of a call that made no tool call is the first maestro
// hears of it: its session and signed facts come from the telephony record
// and the system__ dynamic variables, the caller being whoever placed the
// call.
func TestElevenLabsPostCallFacts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file   string
		id     string
		signed map[string]string
		turns  int
	}{
		{"elevenlabs_post_call_twilio_inbound.json", "conv_0101k5qv4m1fe8pt", map[string]string{
			tools.SignedCallerNumber: "+14155550100", tools.SignedCalledNumber: "+14155550199",
			tools.SignedCallSID: "CA0123456789abcdef0123456789abcdef"}, 2},
		{"elevenlabs_post_call_sip_outbound.json", "conv_0201k5qv4m1fe8pt", map[string]string{
			tools.SignedCallerNumber: "+14155550199", tools.SignedCalledNumber: "+14155550100",
			tools.SignedCallSID: "sip-0123456789"}, 2},
		{"elevenlabs_post_call_web.json", "conv_0301k5qv4m1fe8pt", map[string]string{}, 1},
	} {
		pc, err := platform.ParseElevenLabsPostCall(fixture(t, tc.file))
		require.NoError(t, err, tc.file)
		require.Equal(t, platform.ElevenLabsTranscription, pc.Type)
		call := pc.CallInfo()
		require.Equal(t, tc.id, call.ID, tc.file)
		require.Equal(t, tc.signed, call.Signed, tc.file)
		tr := pc.Transcript()
		require.Len(t, tr.Turns, tc.turns, "turns with words only: %s", tc.file)
		require.False(t, tr.Turns[0].At.IsZero(), "timed from the call's start")
	}
}

// The telephony record wins over the dynamic variables, which fill only
// what it leaves out.
func TestElevenLabsPostCallPrefersThePhoneCall(t *testing.T) {
	t.Parallel()
	pc, err := platform.ParseElevenLabsPostCall([]byte(`{"type":"post_call_transcription","event_timestamp":1767225660,"data":{
		"conversation_id":"conv_1","status":"done","transcript":[],
		"metadata":{"phone_call":{"type":"twilio","direction":"inbound","agent_number":"","external_number":"+14155550100","call_sid":"CA1"}},
		"conversation_initiation_client_data":{"dynamic_variables":{"system__caller_id":"+14155550177","system__called_number":"+14155550199","system__call_sid":"CA2"}}}}`))
	require.NoError(t, err)
	require.Equal(t, map[string]string{tools.SignedCallerNumber: "+14155550100", tools.SignedCalledNumber: "+14155550199",
		tools.SignedCallSID: "CA1"}, pc.CallInfo().Signed)
}

// A transcription webhook without a conversation is refused; other
// post-call events are read and left alone.
func TestElevenLabsPostCallErrors(t *testing.T) {
	t.Parallel()
	_, err := platform.ParseElevenLabsPostCall([]byte(`{"type":"post_call_transcription","data":{"status":"done"}}`))
	require.ErrorContains(t, err, "data.conversation_id is missing")
	_, err = platform.ParseElevenLabsPostCall([]byte(`{"type":`))
	require.ErrorContains(t, err, "error reading the post-call webhook")
	pc, err := platform.ParseElevenLabsPostCall([]byte(`{"type":"post_call_audio","event_timestamp":1767225660,"data":{"agent_id":"a","conversation_id":"c","full_audio":"UklGRg=="}}`))
	require.NoError(t, err)
	require.Equal(t, "post_call_audio", pc.Type)
	pc, err = platform.ParseElevenLabsPostCall([]byte(`{"type":"call_initiation_failure","event_timestamp":1767225660,"data":{"agent_id":"a","conversation_id":"c","failure_reason":"busy","metadata":{"type":"twilio","body":{}}}}`))
	require.NoError(t, err, "a failure's metadata has another shape")
	require.Equal(t, "call_initiation_failure", pc.Type)
}

// A server tool's body is its request_body_schema filled by the model and
// by the system__ dynamic variables: the variables are the call, the rest
// the arguments.
func TestElevenLabsToolBodyAsDocumented(t *testing.T) {
	t.Parallel()
	call, args, err := platform.ParseElevenLabsTool([]byte(`{"to":"+14155550100","body":"Booked.","count":2,
		"system__conversation_id":"conv_1","system__caller_id":"+14155550100","system__called_number":"+14155550199",
		"system__call_sid":"CA1","system__time_utc":"2026-01-01T00:00:00Z"}`))
	require.NoError(t, err)
	require.Equal(t, platform.Call{ID: "conv_1", Signed: map[string]string{tools.SignedCallerNumber: "+14155550100",
		tools.SignedCalledNumber: "+14155550199", tools.SignedCallSID: "CA1"}}, call)
	require.JSONEq(t, `{"to":"+14155550100","body":"Booked.","count":2}`, string(args), "no system__ field is an argument")

	call, args, err = platform.ParseElevenLabsTool([]byte(`{"system__conversation_id":"conv_2","system__caller_id":""}`))
	require.NoError(t, err)
	require.Equal(t, platform.Call{ID: "conv_2", Signed: map[string]string{}}, call, "a web call signs no numbers")
	require.JSONEq(t, `{}`, string(args))

	_, _, err = platform.ParseElevenLabsTool([]byte(`{"to":"+14155550100"}`))
	require.ErrorContains(t, err, "system__conversation_id is missing")
	_, _, err = platform.ParseElevenLabsTool([]byte(`["not","an","object"]`))
	require.ErrorContains(t, err, "error reading the tool body")
}
