package postcall_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/internal/postcall"
	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func demo(t *testing.T) postcall.Rules {
	t.Helper()
	c, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	return postcall.Rules{Catalog: c}
}

func caller(text string) maestrotype.Turn { return maestrotype.Turn{Speaker: "caller", Text: text} }
func agent(text string) maestrotype.Turn  { return maestrotype.Turn{Speaker: "agent", Text: text} }

// call is a call with work of every kind: two recorded messages, one
// without a callback number, and caller turns matching one rule, two
// rules and none, between agent turns that would match were they the
// caller's.
func call() maestrotype.Gathered {
	return maestrotype.Gathered{
		SessionID: "call-1",
		Facts:     map[string]string{"tenant_id": "t_100", "caller_number": "+15551234567"},
		Deferred: []maestrotype.DeferredIntent{
			{ID: "def_1", Tool: "take_message", Args: json.RawMessage(`{"message":"The dryer is noisy","callback_number":"+15557654321"}`)},
			{ID: "def_2", Tool: "take_message", Args: json.RawMessage(`{"message":"Thanks for the quick fix"}`)},
		},
		Transcript: maestrotype.Transcript{Turns: []maestrotype.Turn{
			agent("Demo Properties, how can I help?"),
			caller("My kitchen sink is leaking and the heater is broken."),
			agent("I'm sorry about the leak. Someone will call you back."),
			caller("Yes, please call me back. There's a leak in the bathroom too."),
			caller("Thanks, bye."),
		}},
	}
}

// want is a work item with its arguments decoded, so expectations read as
// the arguments rather than their JSON spelling.
type want struct {
	Key, Tool, Source, DeferredID string
	Args                          map[string]string
}

// wantFailure is a failure whose reason contains Reason.
type wantFailure struct {
	Key, Source, DeferredID, Tool, Reason string
}

var (
	def1 = want{"def_1", "deliver_message", "deferred:def_1", "def_1",
		map[string]string{"message": "The dryer is noisy", "callback_number": "+15557654321"}}
	def2 = want{"def_2", "deliver_message", "deferred:def_2", "def_2",
		map[string]string{"message": "Thanks for the quick fix"}}
	maintenance1 = want{"maintenance-1", "create_work_order", "transcript:maintenance#1", "",
		map[string]string{"tenant_id": "t_100", "category": "other", "priority": "routine",
			"description": "My kitchen sink is leaking and the heater is broken."}}
	callback3 = want{"callback_request-3", "request_callback", "transcript:callback_request#3", "",
		map[string]string{"request": "Yes, please call me back. There's a leak in the bathroom too.", "callback_number": "+15551234567"}}
	maintenance3 = want{"maintenance-3", "create_work_order", "transcript:maintenance#3", "",
		map[string]string{"tenant_id": "t_100", "category": "other", "priority": "routine",
			"description": "Yes, please call me back. There's a leak in the bathroom too."}}
)

func TestRulesExtract(t *testing.T) {
	t.Parallel()
	rules := demo(t)
	cases := []struct {
		name     string
		edit     func(g *maestrotype.Gathered)
		items    []want
		failures []wantFailure
	}{
		{
			name:  "recorded intents first, then transcript work by turn and rule",
			edit:  func(*maestrotype.Gathered) {},
			items: []want{def1, def2, maintenance1, callback3, maintenance3},
		},
		{
			name: "no match, no items",
			edit: func(g *maestrotype.Gathered) {
				g.Deferred = nil
				g.Transcript.Turns = []maestrotype.Turn{agent("How can I help?"), caller("What time does the office open?")}
			},
		},
		{
			name: "only the rule's speaker matches",
			edit: func(g *maestrotype.Gathered) {
				g.Deferred = nil
				g.Transcript.Turns = []maestrotype.Turn{agent("Is the sink leaking? I can have someone call you back.")}
			},
		},
		{
			name: "empty call",
			edit: func(g *maestrotype.Gathered) { *g = maestrotype.Gathered{SessionID: "call-1"} },
		},
		{
			name: "an intent of a tool without a delivery fails alone",
			edit: func(g *maestrotype.Gathered) {
				g.Deferred = append([]maestrotype.DeferredIntent{{ID: "def_0", Tool: "send_sms", Args: json.RawMessage(`{}`)}}, g.Deferred...)
			},
			items:    []want{def1, def2, maintenance1, callback3, maintenance3},
			failures: []wantFailure{{"def_0", "deferred:def_0", "def_0", "", "no post-call delivery for send_sms"}},
		},
		{
			name:  "an intent that is not an object fails alone",
			edit:  func(g *maestrotype.Gathered) { g.Deferred[0].Args = json.RawMessage(`"hello"`) },
			items: []want{def2, maintenance1, callback3, maintenance3},
			failures: []wantFailure{{"def_1", "deferred:def_1", "def_1", "deliver_message",
				"error reading the intent recorded by take_message"}},
		},
		{
			name: "an intent whose delivery does not fit its tool fails alone",
			edit: func(g *maestrotype.Gathered) {
				g.Deferred[1].Args = json.RawMessage(`{"message":"Call me","callback_number":"555-0100"}`)
			},
			items:    []want{def1, maintenance1, callback3, maintenance3},
			failures: []wantFailure{{"def_2", "deferred:def_2", "def_2", "deliver_message", "callback_number"}},
		},
		{
			name: "a missing session fact leaves its argument out",
			edit: func(g *maestrotype.Gathered) { g.Facts = nil },
			items: []want{def1, def2, {
				"callback_request-3", "request_callback", "transcript:callback_request#3", "",
				map[string]string{"request": "Yes, please call me back. There's a leak in the bathroom too."},
			}},
			failures: []wantFailure{
				{"maintenance-1", "transcript:maintenance#1", "", "create_work_order", "tenant_id"},
				{"maintenance-3", "transcript:maintenance#3", "", "create_work_order", "tenant_id"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := call()
			tc.edit(&g)
			res, err := rules.Extract(context.Background(), g)
			require.NoError(t, err)
			require.Equal(t, tc.items, decode(t, res.Items))
			require.Len(t, res.Failures, len(tc.failures), "%+v", res.Failures)
			for i, w := range tc.failures {
				f := res.Failures[i]
				require.Equal(t, []string{w.Key, w.Source, w.DeferredID, w.Tool}, []string{f.Key, f.Source, f.DeferredID, f.Tool})
				require.Contains(t, f.Reason, w.Reason)
			}
		})
	}
}

func TestRulesExtractIsStable(t *testing.T) {
	t.Parallel()
	rules := demo(t)
	first, err := rules.Extract(context.Background(), call())
	require.NoError(t, err)

	// A re-run judges what the workflow recorded: the input after a trip
	// through JSON, as it crosses into an activity.
	raw, err := json.Marshal(call())
	require.NoError(t, err)
	var again maestrotype.Gathered
	require.NoError(t, json.Unmarshal(raw, &again))
	for range 5 {
		second, err := rules.Extract(context.Background(), again)
		require.NoError(t, err)
		require.Equal(t, first, second)
	}
}

func TestRulesExtractRefusesUnkeyableInput(t *testing.T) {
	t.Parallel()
	rules := demo(t)
	cases := []struct {
		name string
		edit func(g *maestrotype.Gathered)
		err  string
	}{
		{"intent without an ID", func(g *maestrotype.Gathered) { g.Deferred[1].ID = "" }, "deferred item 1 (take_message) has no ID"},
		{"intent gathered twice", func(g *maestrotype.Gathered) { g.Deferred[1].ID = "def_1" }, `key "def_1" names two pieces of work`},
		{"intent ID spelling a transcript key", func(g *maestrotype.Gathered) { g.Deferred[1].ID = "maintenance-3" }, `key "maintenance-3"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := call()
			tc.edit(&g)
			_, err := rules.Extract(context.Background(), g)
			require.ErrorContains(t, err, tc.err)
		})
	}

	_, err := postcall.Rules{}.Extract(context.Background(), call())
	require.ErrorContains(t, err, "no catalog")
}

func TestRulesWithoutPostCallSection(t *testing.T) {
	t.Parallel()
	// A catalog with no record-deferred tool needs no postcall section; a
	// call judged by it has nothing to deliver, and an intent gathered
	// anyway is a failure rather than silence.
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(tools.DemoCatalogYAML, &doc))
	delete(doc, "postcall")
	doc["agents"] = doc["agents"].([]any)[:1]
	voice := doc["agents"].([]any)[0].(map[string]any)
	voice["allow"] = slices.DeleteFunc(voice["allow"].([]any), func(name any) bool { return name == "take_message" })
	doc["tools"] = slices.DeleteFunc(doc["tools"].([]any), func(row any) bool {
		return row.(map[string]any)["name"] == "take_message"
	})
	data, err := yaml.Marshal(doc)
	require.NoError(t, err)
	c, err := tools.Load(data)
	require.NoError(t, err)
	require.Nil(t, c.PostCall())

	res, err := postcall.Rules{Catalog: c}.Extract(context.Background(), call())
	require.NoError(t, err)
	require.Empty(t, res.Items, "without rules the transcript yields nothing")
	require.Len(t, res.Failures, 2)
	require.Equal(t, "def_1", res.Failures[0].Key)
	require.Contains(t, res.Failures[0].Reason, "no post-call delivery for take_message")
}

func decode(t *testing.T, items []maestrotype.WorkItem) []want {
	t.Helper()
	if items == nil {
		return nil
	}
	out := make([]want, 0, len(items))
	for _, it := range items {
		var args map[string]string
		require.NoError(t, json.Unmarshal(it.Args, &args), "%s", it.Args)
		out = append(out, want{it.Key, it.Tool, it.Source, it.DeferredID, args})
	}
	return out
}

// A recorded message carries its fallback channels, rendered from the same
// intent, and the catalog's words make it urgent: every channel's deadline
// shrinks to the urgent one.
func TestDeferredItemCarriesFallbacksAndUrgency(t *testing.T) {
	t.Parallel()
	r := demo(t)
	res, err := r.Extract(context.Background(), maestrotype.Gathered{
		SessionID: "call-1",
		Facts:     map[string]string{"caller_number": "+15551234567", "tenant_id": "t_100"},
		Deferred: []maestrotype.DeferredIntent{
			{ID: "def_1", Tool: "take_message", Args: json.RawMessage(`{"message":"The dryer is noisy"}`)},
			{ID: "def_2", Tool: "take_message", Args: json.RawMessage(`{"message":"Gas smell in the hallway, please send someone"}`)},
		},
		Transcript: maestrotype.Transcript{Turns: []maestrotype.Turn{caller("There's no heat, please call me back.")}},
	})
	require.NoError(t, err)
	require.Empty(t, res.Failures)
	require.Len(t, res.Items, 4)

	routine := res.Items[0]
	require.False(t, routine.Urgent)
	require.Equal(t, tools.DefaultDeliveryDeadline, routine.Deadline)
	var channels []string
	for _, f := range routine.Fallbacks {
		channels = append(channels, f.Tool)
	}
	require.Equal(t, []string{"request_callback", "escalate_to_human"}, channels)
	var page map[string]string
	require.NoError(t, json.Unmarshal(routine.Fallbacks[1].Args, &page))
	require.Equal(t, "+15551234567", page["callback_number"], "the page falls back to the number the caller called from")
	require.Contains(t, page["reason"], "The dryer is noisy")

	gas := res.Items[1]
	require.True(t, gas.Urgent)
	urgent := r.Catalog.PostCall().Urgent.Deadline
	require.Equal(t, urgent, gas.Deadline)
	for _, f := range gas.Fallbacks {
		require.LessOrEqual(t, f.Deadline, urgent)
	}
	for _, it := range res.Items[2:] {
		require.True(t, it.Urgent, "%s: the turn says there is no heat", it.Key)
		require.Equal(t, urgent, it.Deadline)
	}
}
