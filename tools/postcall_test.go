package tools_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func TestDemoPostCall(t *testing.T) {
	t.Parallel()
	c := demo(t)
	pc := c.PostCall()
	require.NotNil(t, pc)

	agent, ok := c.Agent(pc.Agent)
	require.True(t, ok)
	require.Equal(t, []string{"create_work_order", "deliver_message", "escalate_to_human", "request_callback"}, agent.Allowed())
	voice, _ := c.Agent("voice-agent")
	require.False(t, voice.Allows("deliver_message"), "in-call, the caller hears only that the team will get it")

	d, ok := pc.Delivery("take_message")
	require.True(t, ok)
	require.Equal(t, "deliver_message", d.Tool)
	require.Equal(t, 24*time.Hour, d.Deadline)
	var fallbacks []string
	for _, f := range d.Fallbacks {
		fallbacks = append(fallbacks, f.Tool)
		require.Positive(t, f.Deadline)
	}
	require.Equal(t, []string{"request_callback", "escalate_to_human"}, fallbacks, "by text to the on-call phone, then a page")
	require.True(t, pc.Urgent.Matches("I can smell GAS in the hallway"))
	require.True(t, pc.Urgent.Matches("there's no  heat"))
	require.False(t, pc.Urgent.Matches("the gasket is loose"), "whole words only")
	require.Equal(t, 5*time.Minute, pc.Urgent.Deadline)
	_, ok = pc.Delivery("send_sms")
	require.False(t, ok, "real-sync tools deliver during the call")
	_, ok = (*tools.PostCall)(nil).Delivery("take_message")
	require.False(t, ok)

	names := make([]string, 0, len(pc.Rules))
	for _, r := range pc.Rules {
		names = append(names, r.Name)
	}
	require.Equal(t, []string{"callback_request", "maintenance"}, names)
}

func TestOnFailure(t *testing.T) {
	t.Parallel()
	voice, _ := demo(t).Agent("voice-agent")
	require.Equal(t, maestrotype.OnFailureNone, voice.OnFailure)

	d := minimalDoc(t)
	d.agent()["on_failure"] = "rollback"
	c := loadDoc(t, d)
	agent, _ := c.Agent("agent")
	require.Equal(t, maestrotype.OnFailureRollback, agent.OnFailure)
	after, _ := c.Agent("after-call")
	require.Equal(t, maestrotype.OnFailureNone, after.OnFailure, "none is the default")
}

func TestLoadRefusesUndeliveredDeferredTool(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	d.postCall()["deliveries"] = []any{}
	data, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)

	_, err = tools.Load(data)
	require.ErrorContains(t, err, `catalog: postcall.deliveries: record-deferred tool "note" has no delivery, so what it records would reach nobody`)
}

func TestDeliveryRender(t *testing.T) {
	t.Parallel()
	c := demo(t)
	d, _ := c.PostCall().Delivery("take_message")
	target, _ := c.Tool(d.Tool)
	cases := []struct {
		name     string
		recorded string
		want     string
	}{
		{"every argument",
			`{"message":"The dryer is noisy","callback_number":"+15551234567"}`,
			`{"message":"The dryer is noisy","callback_number":"+15551234567"}`},
		{"optional argument left out",
			`{"message":"The dryer is noisy"}`,
			`{"message":"The dryer is noisy"}`},
		{"optional argument null",
			`{"message":"The dryer is noisy","callback_number":null}`,
			`{"message":"The dryer is noisy"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args, err := d.Render(json.RawMessage(tc.recorded), nil)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(args))
			require.NoError(t, target.ValidateArgs(args))
		})
	}

	_, err := d.Render(json.RawMessage(`["not", "an", "object"]`), nil)
	require.ErrorContains(t, err, "error reading the intent recorded by take_message")
}

func TestDeliveryToolsRenderOptionalCallbackNumber(t *testing.T) {
	t.Parallel()
	c := demo(t)
	deliver, _ := c.Tool("deliver_message")
	call, err := deliver.RenderCall(tools.TemplateData{
		Args:         map[string]any{"message": "The dryer is noisy", "callback_number": "+15551234567"},
		OperationKey: "op-1",
	})
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"to":      "office@demo-properties.example",
		"subject": "Message from a caller (+15551234567)",
		"body":    "The dryer is noisy\n\nCall back +15551234567.\nDelivered after the call, operation op-1.",
	}, call.Settings)

	call, err = deliver.RenderCall(tools.TemplateData{Args: map[string]any{"message": "The dryer is noisy"}, OperationKey: "op-1"})
	require.NoError(t, err)
	require.Equal(t, "Message from a caller", call.Settings["subject"])
	require.Contains(t, call.Settings["body"], "No callback number was given.")

	callback, _ := c.Tool("request_callback")
	call, err = callback.RenderCall(tools.TemplateData{Args: map[string]any{"request": "Please call me back"}})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"to": "+15550100200", "body": "Callback requested: Please call me back"}, call.Settings)
}

func TestRuleMatches(t *testing.T) {
	t.Parallel()
	loaded := ruleNamed(t, demo(t), "maintenance")
	built := tools.Rule{Name: "maintenance", Speaker: "caller", Any: []string{"leak", "no  heat", "can't"}}
	cases := []struct {
		speaker, text string
		want          bool
	}{
		{"caller", "There's a leak under the sink.", true},
		{"caller", "LEAK!", true},
		{"Caller", "a leak", true},
		{"caller", "We have no\theat at all", true},
		{"caller", "The tap is leaky.", false},
		{"caller", "It looks bleak.", false},
		{"caller", "leak-proof", true},
		{"caller", "fuiteleak", false},
		{"caller", "éleak", false},
		{"agent", "Is there a leak?", false},
		{"caller", "", false},
	}
	for _, tc := range cases {
		turn := maestrotype.Turn{Speaker: tc.speaker, Text: tc.text}
		require.Equal(t, tc.want, loaded.Matches(turn), "loaded rule, %s: %q", tc.speaker, tc.text)
		require.Equal(t, tc.want, built.Matches(turn), "built rule, %s: %q", tc.speaker, tc.text)
	}
	require.True(t, built.Matches(maestrotype.Turn{Speaker: "caller", Text: "I can’t get through"}), "typographic apostrophes match")
	require.False(t, tools.Rule{Speaker: "caller"}.Matches(maestrotype.Turn{Speaker: "caller", Text: "anything"}), "no phrases match nothing")
}

func TestRuleRender(t *testing.T) {
	t.Parallel()
	c := demo(t)
	rule := ruleNamed(t, c, "maintenance")
	target, _ := c.Tool(rule.Tool)
	turn := maestrotype.Turn{Speaker: "caller", Text: "The kitchen sink is leaking."}

	args, err := rule.Render(turn, map[string]any{"tenant_id": "t_100"})
	require.NoError(t, err)
	require.JSONEq(t, `{"tenant_id":"t_100","category":"other","description":"The kitchen sink is leaking.","priority":"routine"}`, string(args))
	require.NoError(t, target.ValidateArgs(args))

	args, err = rule.Render(turn, nil)
	require.NoError(t, err, "a missing session fact reads as empty")
	require.JSONEq(t, `{"category":"other","description":"The kitchen sink is leaking.","priority":"routine"}`, string(args))
	require.ErrorContains(t, target.ValidateArgs(args), "tenant_id", "the target's schema decides whether the omission is acceptable")
}

func TestRenderArgs(t *testing.T) {
	t.Parallel()
	args := map[string]*tools.Template{
		"to":      tools.MustParseTemplate("to", "{{.Session.caller_number}}"),
		"body":    tools.MustParseTemplate("body", "{{.Args.text}}{{with .Args.note}} ({{.}}){{end}}"),
		"literal": tools.MustParseTemplate("literal", "fixed"),
	}
	in := tools.TemplateData{Args: map[string]any{"text": "hi"}, Session: map[string]any{}}
	raw, err := tools.RenderArgs(args, in)
	require.NoError(t, err)
	require.JSONEq(t, `{"body":"hi","literal":"fixed"}`, string(raw))
	require.Equal(t, map[string]any{"text": "hi"}, in.Args, "the caller's maps are not written to")
	require.Empty(t, in.Session)

	in.Args["note"] = "urgent"
	in.Session["caller_number"] = "+15551234567"
	raw, err = tools.RenderArgs(args, in)
	require.NoError(t, err)
	require.JSONEq(t, `{"to":"+15551234567","body":"hi (urgent)","literal":"fixed"}`, string(raw))

	raw, err = tools.RenderArgs(nil, tools.TemplateData{})
	require.NoError(t, err)
	require.JSONEq(t, `{}`, string(raw))

	broken := map[string]*tools.Template{
		"b": tools.MustParseTemplate("b", "{{.Args.text.deeper}}"),
		"a": tools.MustParseTemplate("a", "{{.Args.text.deeper}}"),
	}
	for range 3 {
		_, err = tools.RenderArgs(broken, tools.TemplateData{Args: map[string]any{"text": "hi"}})
		require.ErrorContains(t, err, "error rendering argument a:", "the same inputs fail on the same argument")
	}
}

func ruleNamed(t *testing.T, c *tools.Catalog, name string) tools.Rule {
	t.Helper()
	for _, r := range c.PostCall().Rules {
		if r.Name == name {
			return r
		}
	}
	require.FailNow(t, "no rule "+name)
	return tools.Rule{}
}

func loadDoc(t *testing.T, d catalogDoc) *tools.Catalog {
	t.Helper()
	data, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)
	c, err := tools.Load(data)
	require.NoError(t, err)
	return c
}
