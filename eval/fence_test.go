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
		Connector: tools.Connector{Kind: maestrotype.KindTwilioSMS, Settings: map[string]*tools.Template{
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
			t.Connector = tools.Connector{Kind: maestrotype.KindHTTP, Settings: map[string]*tools.Template{"method": tmpl("GET")}}
			t.ReceiptFields = nil
			t.Wording.Success = tmpl("I've transferred you to the manager.")
		}, eval.RulePromiseWithoutDelivery},
		{"description implies a delivery the tool does not perform", func(t *tools.Tool) {
			t.Delivery = maestrotype.DeliveryRecordDeferred
			t.Connector = tools.Connector{Kind: maestrotype.KindDeferred}
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
			t.Connector = tools.Connector{Kind: maestrotype.KindHTTP, Settings: map[string]*tools.Template{"method": tmpl("GET")}}
			t.ReceiptFields = []string{"resource_id"}
		}, eval.RuleNoVerifiableEffect},
		{"deferred tool says sent", func(t *tools.Tool) {
			t.Delivery = maestrotype.DeliveryRecordDeferred
			t.Connector = tools.Connector{Kind: maestrotype.KindDeferred}
			t.ReceiptFields = nil
			t.Wording.Success = tmpl("Your message has been sent to the team.")
		}, eval.RuleDeferredPastTense},
		{"deferred tool says it opened a ticket", func(t *tools.Tool) {
			t.Delivery = maestrotype.DeliveryRecordDeferred
			t.Connector = tools.Connector{Kind: maestrotype.KindDeferred}
			t.ReceiptFields = nil
			t.Wording.Success = tmpl("I've opened a ticket for the team.")
		}, eval.RuleDeferredPastTense},
		{"emergency-capable tool without a safety notice", func(t *tools.Tool) {
			t.RiskTags = []string{"emergency"}
		}, eval.RuleEmergencyWithoutNotice},
		{"failure wording claims the effect", func(t *tools.Tool) {
			t.Wording.Failure = tmpl("Twilio timed out, but the text was delivered.")
		}, eval.RulePromiseBeforeReceipt},
		{"sms wording claims delivery from an accepted receipt", func(t *tools.Tool) {
			t.Wording.Success = tmpl("Your text has been delivered ({{.Receipt.Fields.message_sid}}).")
		}, eval.RuleDeliveryBeforeFinalStatus},
		{"email wording claims delivery from an accepted receipt", func(t *tools.Tool) {
			t.Connector = tools.Connector{Kind: maestrotype.KindSESEmail, Settings: map[string]*tools.Template{
				"to": tmpl("{{.Args.to}}"), "subject": tmpl("hi"), "body": tmpl("{{.Args.body}}"),
			}}
			t.ReceiptFields = []string{"message_id"}
			t.Wording.Success = tmpl("I've emailed the office and they've received it (reference {{.Receipt.Fields.message_id}}).")
		}, eval.RuleDeliveryBeforeFinalStatus},
		{"page wording claims it reached the manager", func(t *tools.Tool) {
			t.Connector = tools.Connector{Kind: maestrotype.KindPage, Settings: map[string]*tools.Template{
				"sms_to": tmpl("+15550001111"), "sms_body": tmpl("x"), "email_to": tmpl("a@example.com"), "email_subject": tmpl("x"), "email_body": tmpl("x"),
			}}
			t.ReceiptFields = []string{"message_sid", "message_id"}
			t.Wording.Success = tmpl("The page {{.Receipt.ID}} reached the on-call manager.")
		}, eval.RuleDeliveryBeforeFinalStatus},
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
		Connector:     tools.Connector{Kind: maestrotype.KindDeferred},
		Wording:       tools.Wording{Success: tmpl("Transferring you now; I've transferred the call.")},
	}
	violations := eval.Fence(append(c.Tools(), liar))
	require.Len(t, violations, 1)
	require.Equal(t, "transfer_call: deferred-past-tense: record-deferred wording \"Transferring you now; I've transferred the call.\" claims as done what is delivered after the call", violations[0].String())
}

// Saying a message was sent, or that it will be delivered, is what an
// accepted receipt proves; an HTTP service's receipt proves its resource,
// so delivery words there are not about a message in flight.
func TestFenceLetsAcceptedReceiptsSaySent(t *testing.T) {
	t.Parallel()
	for _, wording := range []string{
		"I've sent the text; Twilio reports it {{.Receipt.Status}}.",
		"I've sent the text ({{.Receipt.ID}}); it should be delivered shortly.",
		"I've sent it ({{.Receipt.ID}}); once it's delivered they'll see it.",
	} {
		tool := honestSMS()
		tool.Wording.Success = tmpl(wording)
		require.Empty(t, eval.Fence([]*tools.Tool{tool}), wording)
	}
	workOrder := honestSMS()
	workOrder.Connector = tools.Connector{Kind: maestrotype.KindHTTP, Settings: map[string]*tools.Template{"method": tmpl("POST")}}
	workOrder.ReceiptFields = []string{"resource_id"}
	workOrder.Wording.Success = tmpl("Work order {{.Receipt.ID}} was received by maintenance.")
	require.Empty(t, eval.Fence([]*tools.Tool{workOrder}))
}

// A tool a model is offered must open its description with when to call
// it; a compensation no agent may call is spared.
func TestFenceBitesOnADescriptionThatDoesNotSayWhen(t *testing.T) {
	t.Parallel()
	good := honestSMS()
	good.Description = "Call when the caller asks for a text."
	bad := honestSMS()
	bad.Name = "bad_tool"
	bad.Description = "Sends a text message."
	undo := honestSMS()
	undo.Name = "unsend"
	undo.Description = "Undoes send_sms. Run by rollback."

	require.Empty(t, eval.FenceOffered([]*tools.Tool{good, undo}, []string{"send_sms"}))
	violations := eval.FenceOffered([]*tools.Tool{good, bad, undo}, []string{"send_sms", "bad_tool"})
	require.Len(t, violations, 1)
	require.Equal(t, "bad_tool", violations[0].Tool)
	require.Equal(t, eval.RuleDescriptionNotPrescriptive, violations[0].Rule)
}
