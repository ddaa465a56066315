package server_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/platform"
	"github.com/maestro-run/maestro/internal/server"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// The platforms' secrets in the tests' environment.
var platformEnv = map[string]string{
	"TEST_VAPI_SECRET":       "vapi-hmac-secret",
	"TEST_ELEVENLABS_SECRET": "elevenlabs-webhook-secret",
	"TEST_RETELL_API_KEY":    "retell-api-key",
}

const (
	signedCaller = "+14155550100"
	signedCalled = "+14155550199"
)

// roomyBudget is the answer budget for tests that expect the outcome, not
// the pending wording: the longest ElevenLabs takes, so a loaded machine
// still answers within it.
const roomyBudget = "110s"

// withPlatforms adds one agent per platform to the demo catalog, each with
// the given answer budget, and lets send_sms's rule rest on any signed
// fact (the default) rather than only Twilio's: a text to the number the
// platform signed as the caller's needs no human.
func withPlatforms(budget string) func(*options) {
	return func(o *options) {
		var agents strings.Builder
		agents.WriteString("agents:\n")
		for _, p := range []struct{ id, kind, env string }{
			{"vapi-agent", "vapi", "TEST_VAPI_SECRET"},
			{"el-agent", "elevenlabs", "TEST_ELEVENLABS_SECRET"},
			{"retell-agent", "retell", "TEST_RETELL_API_KEY"},
		} {
			fmt.Fprintf(&agents, "  - id: %s\n    description: %s assistant\n    api_key_sha256: %s\n"+
				"    allow: [send_sms, lookup_tenant, take_message]\n"+
				"    platform:\n      kind: %s\n      secret_env: %s\n      answer_budget: %s\n",
				p.id, p.kind, tools.HashKey(p.id+"-key"), p.kind, p.env, budget)
		}
		cat := strings.Replace(string(tools.DemoCatalogYAML), "agents:\n", agents.String(), 1)
		cat = strings.Replace(cat, "      auto_approve_provenance: [platform-signed:twilio, operator]\n", "", 1)
		o.catalog = []byte(cat)
		o.strictFacts = true
		o.getenv = func(k string) string { return platformEnv[k] }
	}
}

// answer is what the model would read from a platform's tool call.
type answer struct {
	err  bool
	text string
}

// driver speaks one platform's wire format, signing as the platform does.
type driver struct {
	name  string
	agent string
	env   string
	// toolSigned says tool calls carry a timestamped signature (stale and
	// replay apply); ElevenLabs' server tools carry a bearer secret, so
	// its post-call webhook is used for those checks.
	toolSigned bool
	tool       func(e *env, secret string, at time.Time, callID, toolCallID, tool, args string) *http.Request
	// end is the end-of-call event; filler, when given, is said by the
	// agent as one more turn, to make the transcript as large as needed.
	end func(e *env, secret string, at time.Time, callID string, filler ...string) *http.Request
	// raw sends body as it is, signed, to the route send_sms is called
	// on, or to the event route when event is set.
	raw  func(e *env, secret string, at time.Time, event bool, body []byte) *http.Request
	read func(t *testing.T, body []byte) answer
}

func hmacHex(secret string, parts ...string) string {
	h := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func post(e *env, path string, body []byte, headers map[string]string) *http.Request {
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+path, bytes.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// The shapes below follow each platform's documented payloads.
var drivers = []driver{
	{
		name: "vapi", agent: "vapi-agent", env: "TEST_VAPI_SECRET", toolSigned: true,
		tool: func(e *env, secret string, at time.Time, callID, toolCallID, tool, args string) *http.Request {
			return vapiToolCalls(e, secret, at, callID, toolCallID, tool, args, "")
		},
		end: func(e *env, secret string, at time.Time, callID string, filler ...string) *http.Request {
			start := at.Add(-time.Minute).UnixMilli()
			body := mustJSON(e.t, map[string]any{"message": map[string]any{
				"type": "end-of-call-report", "endedReason": "customer-ended-call", "timestamp": at.UnixMilli(),
				"call": map[string]any{"id": callID, "customer": map[string]any{"number": signedCaller}},
				"artifact": map[string]any{
					"transcript": "AI: How can I help?\nUser: Please call me back tomorrow.",
					"messages": append([]any{
						map[string]any{"role": "system", "message": "You are a property manager's assistant."},
						map[string]any{"role": "bot", "message": "How can I help?", "time": start},
						map[string]any{"role": "user", "message": "Please call me back tomorrow.", "time": start + 3000},
					}, fillerTurns(filler, func(text string) any { return map[string]any{"role": "bot", "message": text, "time": start + 4000} })...),
				},
			}})
			return signedVapi(e, secret, at, body)
		},
		raw: func(e *env, secret string, at time.Time, _ bool, body []byte) *http.Request {
			return signedVapi(e, secret, at, body)
		},
		read: func(t *testing.T, body []byte) answer {
			var res platform.VapiResults
			require.NoError(t, json.Unmarshal(body, &res), "%s", body)
			require.Len(t, res.Results, 1)
			r := res.Results[0]
			require.NotContains(t, r.Result+r.Error, "\n", "Vapi wants a single line")
			if r.Error != "" {
				return answer{err: true, text: r.Error}
			}
			return answer{text: r.Result}
		},
	},
	{
		name: "elevenlabs", agent: "el-agent", env: "TEST_ELEVENLABS_SECRET",
		tool: func(e *env, secret string, _ time.Time, callID, _, tool, args string) *http.Request {
			var fields map[string]any
			require.NoError(e.t, json.Unmarshal([]byte(args), &fields))
			fields["system__conversation_id"] = callID
			fields["system__caller_id"] = signedCaller
			fields["system__called_number"] = signedCalled
			fields["system__call_sid"] = "CA0123456789abcdef"
			return elevenLabsTool(e, secret, tool, mustJSON(e.t, fields))
		},
		end: func(e *env, secret string, at time.Time, callID string, filler ...string) *http.Request {
			msg := func(s string) *string { return &s }
			body := mustJSON(e.t, map[string]any{
				"type": "post_call_transcription", "event_timestamp": at.Unix(),
				"data": map[string]any{
					"agent_id": "agent_01", "conversation_id": callID, "status": "done",
					"transcript": append([]any{
						map[string]any{"role": "agent", "message": msg("How can I help?"), "time_in_call_secs": 0},
						map[string]any{"role": "user", "message": msg("Please call me back tomorrow."), "time_in_call_secs": 3},
						map[string]any{"role": "agent", "message": nil, "time_in_call_secs": 5,
							"tool_calls": []any{map[string]any{"tool_name": "take_message"}}},
					}, fillerTurns(filler, func(text string) any { return map[string]any{"role": "agent", "message": text, "time_in_call_secs": 6} })...),
					"metadata": map[string]any{"start_time_unix_secs": at.Add(-time.Minute).Unix(), "call_duration_secs": 60},
					"conversation_initiation_client_data": map[string]any{"dynamic_variables": map[string]any{
						"system__conversation_id": callID, "system__caller_id": signedCaller, "system__called_number": signedCalled}},
					"analysis": map[string]any{"transcript_summary": "The caller asked for a callback.", "call_successful": "success"},
				},
			})
			return signedElevenLabsEvent(e, secret, at, body)
		},
		raw: func(e *env, secret string, at time.Time, event bool, body []byte) *http.Request {
			if event {
				return signedElevenLabsEvent(e, secret, at, body)
			}
			return elevenLabsTool(e, secret, "send_sms", body)
		},
		read: readPlatformAnswer,
	},
	{
		name: "retell", agent: "retell-agent", env: "TEST_RETELL_API_KEY", toolSigned: true,
		tool: func(e *env, secret string, at time.Time, callID, _, tool, args string) *http.Request {
			body := mustJSON(e.t, map[string]any{
				"name": tool,
				"call": map[string]any{"call_id": callID, "agent_id": "agent_01", "call_status": "ongoing",
					"from_number": signedCaller, "to_number": signedCalled, "direction": "inbound",
					"telephony_identifier": map[string]any{"twilio_call_sid": "CA0123456789abcdef"}},
				"args": json.RawMessage(args),
			})
			return signedRetell(e, secret, at, false, body)
		},
		end: func(e *env, secret string, at time.Time, callID string, filler ...string) *http.Request {
			body := mustJSON(e.t, map[string]any{
				"event": "call_ended",
				"call": map[string]any{"call_id": callID, "agent_id": "agent_01", "call_status": "ended",
					"from_number": signedCaller, "to_number": signedCalled, "direction": "inbound",
					"start_timestamp": at.Add(-time.Minute).UnixMilli(), "end_timestamp": at.UnixMilli(),
					"transcript": "Agent: How can I help?\nUser: Please call me back tomorrow.\n",
					"transcript_object": append([]any{
						map[string]any{"role": "agent", "content": "How can I help?", "words": []any{map[string]any{"word": "How", "start": 0.2, "end": 0.4}}},
						map[string]any{"role": "user", "content": "Please call me back tomorrow.", "words": []any{map[string]any{"word": "Please", "start": 3.1, "end": 3.4}}},
					}, fillerTurns(filler, func(text string) any { return map[string]any{"role": "agent", "content": text, "words": []any{}} })...),
				},
			})
			return signedRetell(e, secret, at, true, body)
		},
		raw:  signedRetell,
		read: readPlatformAnswer,
	},
}

// fillerTurns is one platform turn per filler text.
func fillerTurns(filler []string, turn func(text string) any) []any {
	var out []any
	for _, f := range filler {
		out = append(out, turn(f))
	}
	return out
}

// signedVapi posts a server message signed as Vapi signs it.
func signedVapi(e *env, secret string, at time.Time, body []byte) *http.Request {
	ts := strconv.FormatInt(at.UnixMilli(), 10)
	return post(e, "/v1/platforms/vapi/vapi-agent", body, map[string]string{
		"x-timestamp": ts, "x-signature": hmacHex(secret, ts, ".", string(body))})
}

// elevenLabsTool posts a server tool's call with the bearer secret
// ElevenLabs sends.
func elevenLabsTool(e *env, secret, tool string, body []byte) *http.Request {
	return post(e, "/v1/platforms/elevenlabs/el-agent/tools/"+tool, body, map[string]string{"Authorization": "Bearer " + secret})
}

// signedElevenLabsEvent posts a post-call webhook signed as ElevenLabs
// signs it.
func signedElevenLabsEvent(e *env, secret string, at time.Time, body []byte) *http.Request {
	t := strconv.FormatInt(at.Unix(), 10)
	return post(e, "/v1/platforms/elevenlabs/el-agent/post-call", body, map[string]string{
		"ElevenLabs-Signature": "t=" + t + ",v0=" + hmacHex(secret, t, ".", string(body))})
}

// signedRetell posts a function call, or a call event, signed as Retell
// signs them.
func signedRetell(e *env, secret string, at time.Time, event bool, body []byte) *http.Request {
	path := "/v1/platforms/retell/retell-agent/functions"
	if event {
		path = "/v1/platforms/retell/retell-agent/webhook"
	}
	v := strconv.FormatInt(at.UnixMilli(), 10)
	return post(e, path, body, map[string]string{"X-Retell-Signature": "v=" + v + ",d=" + hmacHex(secret, string(body), v)})
}

// vapiToolCalls is Vapi's tool-calls message; controlURL, when set, is the
// live call's call.monitor.controlUrl.
func vapiToolCalls(e *env, secret string, at time.Time, callID, toolCallID, tool, args, controlURL string) *http.Request {
	call := map[string]any{"id": callID, "orgId": "org_1", "type": "inboundPhoneCall",
		"phoneCallProviderId": "CA0123456789abcdef", "customer": map[string]any{"number": signedCaller}}
	if controlURL != "" {
		call["monitor"] = map[string]any{"listenUrl": "wss://example.invalid/listen", "controlUrl": controlURL}
	}
	body := mustJSON(e.t, map[string]any{"message": map[string]any{
		"type":        "tool-calls",
		"timestamp":   at.UnixMilli(),
		"call":        call,
		"phoneNumber": map[string]any{"number": signedCalled},
		"customer":    map[string]any{"number": signedCaller},
		"toolCallList": []any{map[string]any{"id": toolCallID, "type": "function",
			"function": map[string]any{"name": tool, "arguments": json.RawMessage(args)}}},
	}})
	return signedVapi(e, secret, at, body)
}

func readPlatformAnswer(t *testing.T, body []byte) answer {
	var a apitype.PlatformAnswer
	require.NoError(t, json.Unmarshal(body, &a), "%s", body)
	if a.Status == mt.StatusPending {
		require.Nil(t, a.Receipt, "a pending answer claims nothing")
	}
	return answer{err: a.Status == mt.StatusError, text: a.Wording}
}

// send sends a platform request through the OpenAPI-checking client and
// returns its status and body.
func send(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := openAPIClient(t).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

func (d driver) call(t *testing.T, e *env, at time.Time, toolCallID, tool, args string) answer {
	t.Helper()
	status, body := send(t, d.tool(e, platformEnv[d.env], at, e.session, toolCallID, tool, args))
	require.Equal(t, http.StatusOK, status, "%s", body)
	return d.read(t, body)
}

// A text to the caller's number, which the platform signed, goes out once
// and is answered with the receipt's wording; the signed number is a
// platform-signed fact, and the session is the platform's call.
func TestPlatformToolCallHappyPath(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withPlatforms(roomyBudget))
			got := d.call(t, e, time.Now(), "call_1", "send_sms", smsToCaller)
			require.False(t, got.err, got.text)
			require.Contains(t, got.text, "I've sent the text")
			require.Equal(t, 1, e.standins.Twilio.CountMessages())
			require.Equal(t, signedCaller, e.standins.Twilio.Messages()[0].To)

			sess, err := e.ops.Session(e.ctx, e.session)
			require.NoError(t, err)
			require.Equal(t, d.agent, sess.AgentID)
			require.Equal(t, signedCaller, sess.Facts["caller_number"])
			require.Equal(t, "platform-signed:"+d.name, sess.FactProvenance["caller_number"])
		})
	}
}

// Forged, stale and replayed requests are refused with 401, logged, and
// run nothing.
func TestPlatformRefusesForgedStaleAndReplayedRequests(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withPlatforms(roomyBudget))
			secret := platformEnv[d.env]
			// A signed request: a tool call where the platform signs one,
			// the end-of-call event otherwise.
			signed := func(secret string, at time.Time) *http.Request {
				if d.toolSigned {
					return d.tool(e, secret, at, e.session, "call_1", "send_sms", smsToCaller)
				}
				return d.end(e, secret, at, e.session)
			}

			status, body := send(t, d.tool(e, "not-the-secret", time.Now(), e.session, "call_1", "send_sms", smsToCaller))
			require.Equal(t, http.StatusUnauthorized, status, "forged: %s", body)
			status, body = send(t, d.end(e, "not-the-secret", time.Now(), e.session))
			require.Equal(t, http.StatusUnauthorized, status, "forged end: %s", body)
			status, body = send(t, signed(secret, time.Now().Add(-time.Hour)))
			require.Equal(t, http.StatusUnauthorized, status, "stale: %s", body)
			require.Contains(t, string(body), "tolerance")

			at := time.Now()
			first, _ := send(t, signed(secret, at))
			require.Equal(t, http.StatusOK, first)
			status, body = send(t, signed(secret, at))
			require.Equal(t, http.StatusUnauthorized, status, "replayed: %s", body)
			require.Contains(t, string(body), "seen before")

			want := 0
			if d.toolSigned {
				want = 1 // the genuine call
			}
			require.Equal(t, want, e.standins.Twilio.CountMessages(), "nothing refused ran")
			refusals, err := e.store.RefusalList(e.ctx, 1000)
			require.NoError(t, err)
			logged := 0
			for _, r := range refusals {
				if r.AgentID == d.agent && r.Code == mt.CodeUnauthorized {
					logged++
				}
			}
			require.Equal(t, 4, logged, "each refusal is logged")
		})
	}
}

// A signed request captured on its way to one maestro process and
// replayed to another on the same ledger, within the platform's tolerance,
// is refused there too and runs nothing: the guard is the ledger's.
func TestPlatformReplayToAnotherProcessIsRefused(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			first := setup(t, withPlatforms(roomyBudget))
			second := setup(t, withPlatforms(roomyBudget), alongside(first))
			secret, at := platformEnv[d.env], time.Now()
			// The same signed request, sent to either process.
			signed := func(e *env) *http.Request {
				if d.toolSigned {
					return d.tool(e, secret, at, e.session, "call_1", "send_sms", smsToCaller)
				}
				return d.end(e, secret, at, e.session)
			}

			status, body := send(t, signed(first))
			require.Equal(t, http.StatusOK, status, "%s", body)
			status, body = send(t, signed(second))
			require.Equal(t, http.StatusUnauthorized, status, "replayed to the other process: %s", body)
			require.Contains(t, string(body), "seen before")

			if d.toolSigned {
				require.Equal(t, 1, first.standins.Twilio.CountMessages(), "the genuine call only")
				invs, err := first.store.InvocationListBySession(first.ctx, first.session)
				require.NoError(t, err)
				require.Len(t, invs, 1, "the replay was admitted nowhere")
			}
			refusals, err := first.store.RefusalList(first.ctx, 1000)
			require.NoError(t, err)
			logged := 0
			for _, r := range refusals {
				if r.AgentID == d.agent && r.Code == mt.CodeUnauthorized {
					logged++
				}
			}
			require.Equal(t, 1, logged, "the replay is logged as refused")
		})
	}
}

// A barge-in re-fires the same text 13 times with new tool-call IDs: one
// message reaches Twilio, and every call hears the same answer.
func TestPlatformBargeInStormSendsOnce(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withPlatforms(roomyBudget))
			const n = 13
			answers := make([]answer, n)
			start := time.Now()
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					answers[i] = d.call(t, e, start.Add(time.Duration(i)*time.Millisecond), fmt.Sprintf("call_%d", i), "send_sms", smsToCaller)
				})
			}
			wg.Wait()
			for i, a := range answers {
				require.False(t, a.err, "answer %d: %s", i, a.text)
				require.Equal(t, answers[0].text, a.text, "answer %d", i)
			}
			require.Contains(t, answers[0].text, "I've sent the text")
			require.Equal(t, 1, e.standins.Twilio.CountMessages(), "one message for one business action")
			invs, err := e.store.InvocationListBySession(e.ctx, e.session)
			require.NoError(t, err)
			require.Len(t, invs, 1)
		})
	}
}

// A provider slower than the budget: the answer comes within the budget
// with the pending wording, which claims nothing; the text still goes out
// once, and asking again then hears it was sent. The provider's response is
// held four times the budget, so the pending wording can only have come from
// the budget; the test judges the wording, not the clock.
func TestPlatformAnswersWithinBudget(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withPlatforms("2s"))
			twilio := e.standins.Twilio.Faults()
			twilio.DelayNext(1, 8*time.Second)
			got := d.call(t, e, time.Now(), "call_1", "send_sms", smsToCaller)
			twilio.Release()
			require.False(t, got.err, got.text)
			require.Contains(t, got.text, "still working on that")
			require.NotContains(t, got.text, "sent the text")

			require.Eventually(t, func() bool { return e.standins.Twilio.CountMessages() == 1 }, time.Minute, 50*time.Millisecond)
			require.Eventually(t, func() bool {
				invs, err := e.store.InvocationListBySession(e.ctx, e.session)
				return err == nil && len(invs) == 1 && invs[0].State == mt.InvocationSucceeded
			}, time.Minute, 50*time.Millisecond)
			again := d.call(t, e, time.Now(), "call_2", "send_sms", smsToCaller)
			require.Contains(t, again.text, "I've sent the text")
			require.Equal(t, 1, e.standins.Twilio.CountMessages())
		})
	}
}

// A text to a number the platform did not sign waits for a manager: the
// answer is the tool's pending wording, and nothing is sent. The number in
// the model's arguments is never a fact.
func TestPlatformPendingApprovalWording(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withPlatforms(roomyBudget))
			got := d.call(t, e, time.Now(), "call_1", "send_sms", `{"to":"+14155550177","body":"Your code is 1234."}`)
			require.False(t, got.err, got.text)
			require.Equal(t, "I've asked a manager to approve that text before it goes out.", got.text)
			require.Zero(t, e.standins.Twilio.CountMessages())
			sess, err := e.ops.Session(e.ctx, e.session)
			require.NoError(t, err)
			require.Equal(t, mt.SessionAwaitingApproval, sess.State)
			require.Equal(t, signedCaller, sess.Facts["caller_number"], "the arguments changed no fact")
		})
	}
}

// The platform's end-of-call event, sent again as platforms retry, ends
// the call once: one post-call run, which reads the platform's transcript.
func TestPlatformEndOfCallOnceDespiteRetries(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withPlatforms(roomyBudget))
			got := d.call(t, e, time.Now(), "call_1", "take_message", `{"message":"Please renew my parking permit."}`)
			require.False(t, got.err, got.text)
			require.Contains(t, got.text, "the team gets your message")

			ended := 0
			for i := range 3 {
				status, body := send(t, d.end(e, platformEnv[d.env], time.Now().Add(time.Duration(i)*time.Second), e.session))
				require.Equal(t, http.StatusOK, status, "%s", body)
				var res apitype.PlatformEventResult
				require.NoError(t, json.Unmarshal(body, &res))
				require.True(t, res.Handled)
				if res.Ended {
					ended++
				}
			}
			require.Equal(t, 1, ended, "one event ended the call")
			e.waitPostCall()
			sess, err := e.ops.Session(e.ctx, e.session)
			require.NoError(t, err)
			require.Equal(t, mt.SessionEnded, sess.State)
			require.Len(t, sess.PostCall, 2, "the message, and the callback the caller asked for in the transcript: %+v", sess.PostCall)
			for _, it := range sess.PostCall {
				require.Equal(t, "delivered", it.Status, "%+v", it)
			}
			require.Equal(t, 1, e.standins.SES.CountEmails())
			require.Equal(t, 1, e.standins.Twilio.CountMessages(), "the callback request paged the office once")
		})
	}
}

// A call that made no tool call still ends in maestro: the end-of-call
// event creates the session with the facts the platform signs, and the
// post-call workflow runs once on its transcript, retries or not.
func TestPlatformEndOfCallWithoutToolCalls(t *testing.T) {
	t.Parallel()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withPlatforms(roomyBudget))
			ended := 0
			for i := range 3 {
				status, body := send(t, d.end(e, platformEnv[d.env], time.Now().Add(time.Duration(i)*time.Second), e.session))
				require.Equal(t, http.StatusOK, status, "%s", body)
				var res apitype.PlatformEventResult
				require.NoError(t, json.Unmarshal(body, &res))
				require.True(t, res.Handled)
				if res.Ended {
					ended++
				}
				if i == 0 {
					e.waitPostCall()
				}
			}
			require.Equal(t, 1, ended, "one event ended the call")
			e.waitPostCall()
			sess, err := e.ops.Session(e.ctx, e.session)
			require.NoError(t, err)
			require.Equal(t, mt.SessionEnded, sess.State)
			require.Equal(t, d.agent, sess.AgentID)
			require.Equal(t, signedCaller, sess.Facts["caller_number"], "the event's signed caller is a fact")
			require.Len(t, sess.PostCall, 1, "the callback the caller asked for in the transcript: %+v", sess.PostCall)
			require.Equal(t, "delivered", sess.PostCall[0].Status, "%+v", sess.PostCall[0])
			require.Equal(t, 1, e.standins.Twilio.CountMessages(), "the callback request paged the office once")
		})
	}
}

// The export lists the exposed tools in each platform's JSON, with maestro's
// URL and no secret.
func TestPlatformExport(t *testing.T) {
	t.Parallel()
	e := setup(t, withPlatforms(roomyBudget))
	for _, d := range drivers {
		out, err := e.ops.PlatformExport(e.ctx, d.name, d.agent)
		require.NoError(t, err)
		require.Equal(t, d.name, out.Platform)
		require.Len(t, out.Tools, 3)
		raw, err := json.Marshal(out)
		require.NoError(t, err)
		require.NotContains(t, string(raw), platformEnv[d.env], "the secret is never exported")
		require.Contains(t, string(raw), d.env)
		require.Contains(t, string(raw), e.url+"/v1/platforms/"+d.name+"/"+d.agent)
		require.Contains(t, string(raw), `"send_sms"`)
		require.Contains(t, string(raw), `"E.164"`, "the parameter schema comes from the catalog")
	}
	_, err := e.agent.PlatformExport(e.ctx, "vapi", "vapi-agent")
	requireRefusal(t, err, http.StatusForbidden, mt.CodeSessionForbidden)
	_, err = e.ops.PlatformExport(e.ctx, "retell", "vapi-agent")
	requireRefusal(t, err, http.StatusNotFound, mt.CodeNotFound)
}

// The loader refuses two agents naming one secret variable; at start, two
// variables holding one secret are refused too, naming both agents, and
// the secret itself is never in the error.
func TestPlatformAgentsMustNotShareASecretValue(t *testing.T) {
	t.Parallel()
	o := options{}
	withPlatforms(roomyBudget)(&o)
	cat, err := tools.Load(o.catalog)
	require.NoError(t, err)
	secrets, err := server.PlatformSecrets(cat, o.getenv)
	require.NoError(t, err)
	require.Len(t, secrets, 3)

	_, err = server.PlatformSecrets(cat, func(k string) string {
		if k == "TEST_RETELL_API_KEY" {
			return platformEnv["TEST_VAPI_SECRET"]
		}
		return platformEnv[k]
	})
	require.ErrorContains(t, err, `agent "retell-agent": platform.secret_env: TEST_RETELL_API_KEY holds the same secret as agent "vapi-agent"'s platform secret`)
	require.NotContains(t, err.Error(), platformEnv["TEST_VAPI_SECRET"])
}
