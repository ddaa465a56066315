package eval_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/eval"
	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// takeMessage is a well-formed record-deferred tool built in code.
func takeMessage() *tools.Tool {
	return &tools.Tool{
		Name:          "take_message",
		Effect:        maestrotype.EffectWrite,
		Delivery:      maestrotype.DeliveryRecordDeferred,
		Reversibility: maestrotype.ReversibilityIrreversible,
		Connector:     tools.Connector{Kind: maestrotype.KindDeferred},
		Wording: tools.Wording{
			Success: tmpl("I'll make sure the team gets your message."),
			Failure: tmpl("I couldn't take down your message."),
		},
	}
}

// honestPostCall delivers take_message by text and sends callback
// requests the same way; each case below breaks it in one way.
func honestPostCall() *tools.PostCall {
	return &tools.PostCall{
		Agent: "postcall",
		Deliveries: []tools.Delivery{{
			From: "take_message",
			Tool: "send_sms",
			Args: map[string]*tools.Template{"to": tmpl("+15550100200"), "body": tmpl("{{.Args.message}}")},
			// The fallback texts the on-call manager's own phone.
			Deadline: 24 * time.Hour,
			Fallbacks: []tools.Fallback{{
				Tool:     "send_sms",
				Args:     map[string]*tools.Template{"to": tmpl("+15550100100"), "body": tmpl("{{.Args.message}}")},
				Deadline: time.Hour,
			}},
		}},
		Rules: []tools.Rule{{
			Name:    "callback_request",
			Speaker: "caller",
			Any:     []string{"call me back"},
			Tool:    "send_sms",
			Args:    map[string]*tools.Template{"to": tmpl("+15550100200"), "body": tmpl("{{.Args.text}}")},
		}},
	}
}

func TestFenceCatalogBites(t *testing.T) {
	t.Parallel()
	readonly := &tools.Tool{
		Name:          "lookup_tenant",
		Effect:        maestrotype.EffectRead,
		Delivery:      maestrotype.DeliveryReadonly,
		Reversibility: maestrotype.ReversibilityNone,
		Connector:     tools.Connector{Kind: maestrotype.KindHTTP, Settings: map[string]*tools.Template{"method": tmpl("GET")}},
		Wording:       tools.Wording{Success: tmpl("Here is the tenant."), Failure: tmpl("I couldn't look that up.")},
	}
	cases := []struct {
		name   string
		breaks func(ts []*tools.Tool, pc *tools.PostCall) ([]*tools.Tool, *tools.PostCall)
		tool   string
		want   eval.Rule
	}{
		{"no post-call section", func(ts []*tools.Tool, _ *tools.PostCall) ([]*tools.Tool, *tools.PostCall) {
			return ts, nil
		}, "take_message", eval.RuleDeferredUndelivered},
		{"record-deferred tool without a delivery", func(ts []*tools.Tool, pc *tools.PostCall) ([]*tools.Tool, *tools.PostCall) {
			pc.Deliveries = nil
			return ts, pc
		}, "take_message", eval.RuleDeferredUndelivered},
		{"delivery without a fallback", func(ts []*tools.Tool, pc *tools.PostCall) ([]*tools.Tool, *tools.PostCall) {
			pc.Deliveries[0].Fallbacks = nil
			return ts, pc
		}, "take_message", eval.RuleDeferredWithoutFallback},
		{"delivery without a deadline", func(ts []*tools.Tool, pc *tools.PostCall) ([]*tools.Tool, *tools.PostCall) {
			pc.Deliveries[0].Deadline = 0
			return ts, pc
		}, "take_message", eval.RuleDeferredWithoutFallback},
		{"fallback by a tool not in the catalog", func(ts []*tools.Tool, pc *tools.PostCall) ([]*tools.Tool, *tools.PostCall) {
			pc.Deliveries[0].Fallbacks[0].Tool = "carrier_pigeon"
			return ts, pc
		}, "take_message", eval.RulePostCallWithoutReceipt},
		{"delivery by a tool not in the catalog", func(ts []*tools.Tool, pc *tools.PostCall) ([]*tools.Tool, *tools.PostCall) {
			pc.Deliveries[0].Tool = "deliver_message"
			return ts, pc
		}, "take_message", eval.RulePostCallWithoutReceipt},
		{"delivery by a readonly tool", func(ts []*tools.Tool, pc *tools.PostCall) ([]*tools.Tool, *tools.PostCall) {
			pc.Deliveries[0].Tool = "lookup_tenant"
			return append(ts, readonly), pc
		}, "take_message", eval.RulePostCallWithoutReceipt},
		{"delivery by a real-sync tool without receipt fields", func(ts []*tools.Tool, pc *tools.PostCall) ([]*tools.Tool, *tools.PostCall) {
			ts[1].ReceiptFields = nil
			return ts, pc
		}, "take_message", eval.RulePostCallWithoutReceipt},
		{"delivery by a real-sync stub", func(ts []*tools.Tool, pc *tools.PostCall) ([]*tools.Tool, *tools.PostCall) {
			ts[1].Connector = tools.Connector{Kind: "static"}
			return ts, pc
		}, "take_message", eval.RulePostCallWithoutReceipt},
		{"rule dispatching to a record-deferred tool", func(ts []*tools.Tool, pc *tools.PostCall) ([]*tools.Tool, *tools.PostCall) {
			pc.Rules[0].Tool = "take_message"
			return ts, pc
		}, "take_message", eval.RulePostCallWithoutReceipt},
	}
	require.Empty(t, eval.FenceParts([]*tools.Tool{takeMessage(), honestSMS()}, honestPostCall()),
		"the baseline must pass, or the cases prove nothing")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts, pc := tc.breaks([]*tools.Tool{takeMessage(), honestSMS()}, honestPostCall())
			violations := eval.FenceParts(ts, pc)
			v, ok := findRule(violations, tc.want)
			require.True(t, ok, "want %s, got %v", tc.want, violations)
			require.Equal(t, tc.tool, v.Tool, "%v", violations)
		})
	}
}

func TestFenceCatalogNamesTheUndeliveredTool(t *testing.T) {
	t.Parallel()
	violations := eval.FenceParts([]*tools.Tool{takeMessage(), honestSMS()}, nil)
	require.Len(t, violations, 1)
	require.Equal(t, "take_message: deferred-undelivered: no post-call delivery: the agent says the team will get what it records, and nothing would deliver it",
		violations[0].String())
}

// findRule returns the first violation of rule.
func findRule(vs []eval.Violation, rule eval.Rule) (eval.Violation, bool) {
	for _, v := range vs {
		if v.Rule == rule {
			return v, true
		}
	}
	return eval.Violation{}, false
}
