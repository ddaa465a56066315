package tools_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

// withPlatform adds a platform block to the demo's voice agent.
func withPlatform(block string) []byte {
	return []byte(strings.Replace(string(tools.DemoCatalogYAML), "    on_failure: none\n",
		"    on_failure: none\n    platform:\n"+block, 1))
}

func TestPlatformBlockDefaults(t *testing.T) {
	t.Parallel()
	c, err := tools.Load(withPlatform("      kind: vapi\n      secret_env: VAPI_SECRET\n"))
	require.NoError(t, err)
	a, _ := c.Agent("voice-agent")
	require.NotNil(t, a.Platform)
	require.Equal(t, tools.PlatformVapi, a.Platform.Kind)
	require.Equal(t, a.Allowed(), a.Platform.Tools, "the allowlist by default")
	require.Equal(t, 20*time.Second, a.Platform.AnswerBudget)
	require.Equal(t, map[string]string{"caller_number": "caller_number"}, a.Platform.Facts, "signed fields map to declared facts of the same name")
	require.False(t, a.Platform.PushResults, "later results are not pushed by default")

	c, err = tools.Load(withPlatform("      kind: vapi\n      secret_env: VAPI_SECRET\n      push_results: true\n"))
	require.NoError(t, err)
	a, _ = c.Agent("voice-agent")
	require.True(t, a.Platform.PushResults)
	require.Equal(t, tools.DefaultControlHosts, a.Platform.ControlHosts, "Vapi's own domain by default")

	c, err = tools.Load(withPlatform("      kind: retell\n      secret_env: RETELL_API_KEY\n      tools: [send_sms]\n" +
		"      answer_budget: 8s\n      facts: {call_sid: tenant_id}\n"))
	require.NoError(t, err)
	a, _ = c.Agent("voice-agent")
	require.Equal(t, []string{"send_sms"}, a.Platform.Tools)
	require.True(t, a.Platform.Exposes("send_sms"))
	require.False(t, a.Platform.Exposes("issue_refund"))
	require.Equal(t, 8*time.Second, a.Platform.AnswerBudget)
	require.Equal(t, map[string]string{"call_sid": "tenant_id"}, a.Platform.Facts)
}

// ElevenLabs async tools wait the longer async budget, by default as long
// as ElevenLabs lets a tool take less maestro's margin.
func TestPlatformBlockElevenLabsAsyncTools(t *testing.T) {
	t.Parallel()
	c, err := tools.Load(withPlatform("      kind: elevenlabs\n      secret_env: EL_SECRET\n"))
	require.NoError(t, err)
	a, _ := c.Agent("voice-agent")
	require.False(t, a.Platform.AsyncTools, "tools block the turn by default")
	require.Equal(t, tools.DefaultAnswerBudget, a.Platform.AnswerBudget)

	c, err = tools.Load(withPlatform("      kind: elevenlabs\n      secret_env: EL_SECRET\n      async_tools: true\n"))
	require.NoError(t, err)
	a, _ = c.Agent("voice-agent")
	require.True(t, a.Platform.AsyncTools)
	require.Equal(t, 115*time.Second, a.Platform.AnswerBudget)
	require.Equal(t, tools.ElevenLabsMaxResponseTimeout, a.Platform.AnswerBudget+tools.TimeoutMargin)

	c, err = tools.Load(withPlatform("      kind: elevenlabs\n      secret_env: EL_SECRET\n      async_tools: true\n      async_budget: 90s\n"))
	require.NoError(t, err)
	a, _ = c.Agent("voice-agent")
	require.Equal(t, 90*time.Second, a.Platform.AnswerBudget)
}

func TestPlatformBlockErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ block, want string }{
		{"      kind: twilio\n      secret_env: X\n", `platform.kind: unknown platform "twilio"`},
		{"      kind: vapi\n", "platform.secret_env: required"},
		{"      kind: vapi\n      secret_env: sk_live_abc-123\n", "platform.secret_env: want an environment variable name"},
		{"      kind: vapi\n      secret_env: X\n      tools: [cancel_refund]\n", `platform.tools: "cancel_refund" is not on the agent's allowlist`},
		{"      kind: vapi\n      secret_env: X\n      tools: []\n", "platform.tools: is empty"},
		{"      kind: vapi\n      secret_env: X\n      answer_budget: 10m\n", "platform.answer_budget"},
		{"      kind: vapi\n      secret_env: X\n      facts: {caller: caller_number}\n", "platform.facts.caller: not a signed field"},
		{"      kind: vapi\n      secret_env: X\n      facts: {caller_number: phone}\n", `platform.facts.caller_number: "phone" is not a declared session fact`},
		{"      kind: vapi\n      secret_env: X\n      secret: abc\n", "field secret not found"},
		{"      kind: retell\n      secret_env: X\n      push_results: true\n", "platform.push_results: is offered only for vapi"},
		{"      kind: vapi\n      secret_env: X\n      push_results: maybe\n", "cannot unmarshal"},
		{"      kind: elevenlabs\n      secret_env: X\n      answer_budget: 120s\n", `platform.answer_budget: "120s" is not a duration from 1s to 1m55s`},
		{"      kind: vapi\n      secret_env: X\n      async_tools: true\n", "platform.async_tools: is offered only for elevenlabs, not vapi"},
		{"      kind: retell\n      secret_env: X\n      async_tools: true\n", "platform.async_tools: is offered only for elevenlabs, not retell"},
		{"      kind: elevenlabs\n      secret_env: X\n      async_budget: 60s\n", "platform.async_budget: applies only with async_tools: true"},
		{"      kind: elevenlabs\n      secret_env: X\n      async_tools: true\n      answer_budget: 15s\n", "platform.answer_budget: does not apply with async_tools"},
		{"      kind: elevenlabs\n      secret_env: X\n      async_tools: true\n      async_budget: 120s\n", `platform.async_budget: "120s" is not a duration from 1s to 1m55s: ElevenLabs waits at most 2m0s`},
		{"      kind: elevenlabs\n      secret_env: X\n      async_tools: true\n      async_budget: 500ms\n", `platform.async_budget: "500ms" is not a duration`},
		{"      kind: elevenlabs\n      secret_env: X\n      async_tools: true\n      async_budget: soon\n", `platform.async_budget: "soon" is not a duration`},
		{"      kind: elevenlabs\n      secret_env: X\n      async_tools: sometimes\n", "cannot unmarshal"},
		{"      kind: vapi\n      secret_env: X\n      control_hosts: [\"*.vapi.ai\"]\n", "platform.control_hosts: applies only with push_results: true"},
		{"      kind: vapi\n      secret_env: X\n      push_results: true\n      control_hosts: []\n", "platform.control_hosts: is empty"},
		{"      kind: vapi\n      secret_env: X\n      push_results: true\n      control_hosts: [\"*\"]\n", `platform.control_hosts: "*" is not a host name`},
		{"      kind: vapi\n      secret_env: X\n      push_results: true\n      control_hosts: [\"*.ai\"]\n", `platform.control_hosts: "*.ai" is not a host name`},
		{"      kind: vapi\n      secret_env: X\n      push_results: true\n      control_hosts: [\"https://x.vapi.ai\"]\n", `platform.control_hosts: "https://x.vapi.ai" is not a host name`},
		{"      kind: vapi\n      secret_env: X\n      push_results: true\n      control_hosts: [\"x.vapi.ai:443\"]\n", `platform.control_hosts: "x.vapi.ai:443" is not a host name`},
	} {
		_, err := tools.Load(withPlatform(tc.block))
		require.ErrorContains(t, err, tc.want, tc.block)
	}
}

// A pushed result goes only to a control URL whose host the platform block
// allows: Vapi's domain by default, any host under it but not lookalikes.
func TestPlatformControlHosts(t *testing.T) {
	t.Parallel()
	c, err := tools.Load(withPlatform("      kind: vapi\n      secret_env: X\n      push_results: true\n"))
	require.NoError(t, err)
	a, _ := c.Agent("voice-agent")
	for host, want := range map[string]bool{
		"phone-call-websocket.aws-us-west-2-backend-production2.vapi.ai": true,
		"aws-us-west-2-production1-phone-call-websocket.vapi.ai":         true,
		"X.VAPI.AI.":           true,
		"vapi.ai":              false,
		"evil-vapi.ai":         false,
		"vapi.ai.evil.example": false,
		"127.0.0.1":            false,
		"":                     false,
	} {
		require.Equal(t, want, a.Platform.AllowsControlHost(host), host)
	}

	c, err = tools.Load(withPlatform("      kind: vapi\n      secret_env: X\n      push_results: true\n      control_hosts: [control.example.com, \"*.calls.example.com\"]\n"))
	require.NoError(t, err)
	a, _ = c.Agent("voice-agent")
	require.True(t, a.Platform.AllowsControlHost("control.example.com"))
	require.True(t, a.Platform.AllowsControlHost("eu.calls.example.com"))
	require.False(t, a.Platform.AllowsControlHost("x.vapi.ai"), "the list replaces the default")
	require.False(t, a.Platform.AllowsControlHost("other.example.com"))
}

// A budget is refused when its answer is due after the limit a server holds
// a request to, with the field and the setting named; one within it, or an
// agent without a platform, passes.
func TestCheckAnswersWithin(t *testing.T) {
	t.Parallel()
	c, err := tools.Load(withPlatform("      kind: elevenlabs\n      secret_env: EL_SECRET\n      async_tools: true\n      async_budget: 40s\n"))
	require.NoError(t, err)
	require.Equal(t, 45*time.Second, c.LongestAnswer())
	require.NoError(t, c.CheckAnswersWithin(45*time.Second, "--drain-timeout"))
	err = c.CheckAnswersWithin(30*time.Second, "--drain-timeout")
	require.ErrorContains(t, err, `agents[0] "voice-agent": platform.async_budget: 40s is answered up to 45s after a call arrives, but --drain-timeout is 30s`)
	require.ErrorContains(t, err, "raise --drain-timeout to at least 45s")
	var fe *tools.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "platform.async_budget", fe.Field)

	c, err = tools.Load(withPlatform("      kind: retell\n      secret_env: RETELL_API_KEY\n      answer_budget: 8s\n"))
	require.NoError(t, err)
	require.ErrorContains(t, c.CheckAnswersWithin(10*time.Second, "the limit"), "platform.answer_budget: 8s is answered up to 13s")

	c, err = tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	require.Zero(t, c.LongestAnswer())
	require.NoError(t, c.CheckAnswersWithin(time.Second, "the limit"))
}
