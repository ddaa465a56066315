package eval_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/eval"
	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func TestDemoCatalogPassesTheFence(t *testing.T) {
	t.Parallel()
	c, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	require.Empty(t, eval.Fence(c.Tools()))
	require.Empty(t, eval.FenceCatalog(c))
}

// honestSMS is a well-formed real-sync tool built in code; each synthetic
// bad tool below breaks it in one way.
func honestSMS() *tools.Tool {
	return &tools.Tool{
		Name:          "send_sms",
		Effect:        maestrotype.EffectWrite,
		Delivery:      maestrotype.DeliveryRealSync,
		Reversibility: maestrotype.ReversibilityIrreversible,
		Connector: tools.Connector{Kind: tools.KindTwilioSMS, Settings: map[string]*tools.Template{
			"to":   tmpl("{{.Args.to}}"),
			"body": tmpl("{{.Args.body}}"),
		}},
		ReceiptFields: []string{"message_sid", "status"},
		Wording: tools.Wording{
			Success: tmpl("I've sent the text; Twilio reports it {{.Receipt.Status}}."),
			Pending: tmpl("I've asked a manager to approve it."),
			Failure: tmpl("I couldn't send the text."),
		},
	}
}

func tmpl(src string) *tools.Template {
	return tools.MustParseTemplate("test", src)
}

func TestFenceBites(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		breaks func(*tools.Tool)
		want   eval.Rule
	}{
		{"honest tool has no class", func(t *tools.Tool) {
			t.Effect, t.Delivery, t.Reversibility = "", "", ""
		}, eval.RuleUnclassified},
		{"promise wording without a receipt", func(t *tools.Tool) {
			t.ReceiptFields = nil
		}, eval.RuleReceipt},
		{"receipt field the connector cannot produce", func(t *tools.Tool) {
			t.ReceiptFields = []string{"message_sid", "delivered"}
		}, eval.RuleReceipt},
		{"receipt without the provider's ID", func(t *tools.Tool) {
			t.ReceiptFields = []string{"status"}
		}, eval.RuleReceipt},
		{"promise wording on a tool that performs nothing", func(t *tools.Tool) {
			t.Effect, t.Delivery, t.Reversibility = maestrotype.EffectRead, maestrotype.DeliveryReadonly, maestrotype.ReversibilityNone
			t.Connector = tools.Connector{Kind: tools.KindHTTP, Settings: map[string]*tools.Template{"method": tmpl("GET")}}
			t.ReceiptFields = nil
			t.Wording.Success = tmpl("I've transferred you to the manager.")
		}, eval.RulePromiseWithoutDelivery},
		{"description implies a delivery the tool does not perform", func(t *tools.Tool) {
			t.Delivery = maestrotype.DeliveryRecordDeferred
			t.Connector = tools.Connector{Kind: tools.KindDeferred}
			t.ReceiptFields = nil
			t.Description = "Notifies the manager; the manager has been paged."
			t.Wording.Success = tmpl("I'll make sure the manager hears about it.")
		}, eval.RulePromiseWithoutDelivery},
		{"hard-coded success from a stub connector", func(t *tools.Tool) {
			t.Connector = tools.Connector{Kind: "static"}
			t.Wording.Success = tmpl("Done! The manager has been notified.")
		}, eval.RuleNoVerifiableEffect},
		{"hard-coded success wording", func(t *tools.Tool) {
			t.Wording.Success = tmpl("Done! I've sent the text.")
		}, eval.RuleWordingIgnoresReceipt},
		{"no success wording at all", func(t *tools.Tool) {
			t.Wording.Success = nil
		}, eval.RuleWordingIgnoresReceipt},
		{"http GET posing as a write", func(t *tools.Tool) {
			t.Connector = tools.Connector{Kind: tools.KindHTTP, Settings: map[string]*tools.Template{"method": tmpl("GET")}}
			t.ReceiptFields = []string{"resource_id"}
		}, eval.RuleNoVerifiableEffect},
		{"deferred tool says sent", func(t *tools.Tool) {
			t.Delivery = maestrotype.DeliveryRecordDeferred
			t.Connector = tools.Connector{Kind: tools.KindDeferred}
			t.ReceiptFields = nil
			t.Wording.Success = tmpl("Your message has been sent to the team.")
		}, eval.RuleDeferredPastTense},
		{"deferred tool says it opened a ticket", func(t *tools.Tool) {
			t.Delivery = maestrotype.DeliveryRecordDeferred
			t.Connector = tools.Connector{Kind: tools.KindDeferred}
			t.ReceiptFields = nil
			t.Wording.Success = tmpl("I've opened a ticket for the team.")
		}, eval.RuleDeferredPastTense},
		{"failure wording claims the effect", func(t *tools.Tool) {
			t.Wording.Failure = tmpl("Twilio timed out, but the text was delivered.")
		}, eval.RulePromiseBeforeReceipt},
		{"pending wording claims the effect", func(t *tools.Tool) {
			t.Wording.Pending = tmpl("I've sent it; a manager will review it.")
		}, eval.RulePromiseBeforeReceipt},
	}
	require.Empty(t, eval.Fence([]*tools.Tool{honestSMS()}), "the baseline must pass, or the cases prove nothing")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bad := honestSMS()
			bad.Name = "bad_tool"
			tc.breaks(bad)

			violations := eval.Fence([]*tools.Tool{honestSMS(), bad})
			require.NotEmpty(t, violations)
			rules := make([]eval.Rule, 0, len(violations))
			for _, v := range violations {
				require.Equal(t, "bad_tool", v.Tool, "only the bad tool is reported: %s", v)
				rules = append(rules, v.Rule)
			}
			require.Contains(t, rules, tc.want, "%v", violations)
		})
	}
}

func TestFenceBitesInsideALoadedCatalog(t *testing.T) {
	t.Parallel()
	c, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	liar := &tools.Tool{
		Name:          "transfer_call",
		Effect:        maestrotype.EffectWrite,
		Delivery:      maestrotype.DeliveryRecordDeferred,
		Reversibility: maestrotype.ReversibilityIrreversible,
		Connector:     tools.Connector{Kind: tools.KindDeferred},
		Wording:       tools.Wording{Success: tmpl("Transferring you now; I've transferred the call.")},
	}
	violations := eval.Fence(append(c.Tools(), liar))
	require.Len(t, violations, 1)
	require.Equal(t, "transfer_call: deferred-past-tense: record-deferred wording \"Transferring you now; I've transferred the call.\" claims as done what is delivered after the call", violations[0].String())
}
