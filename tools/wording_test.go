package tools_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/receipts"
	"github.com/maestro-run/maestro/tools"
)

func TestRenderWordingNeedsReceiptForRealSyncSuccess(t *testing.T) {
	t.Parallel()
	c := demo(t)
	sms, _ := c.Tool("send_sms")
	args := map[string]any{"to": "+15551234567", "body": "hi"}

	_, err := sms.RenderWording(tools.OutcomeSuccess, tools.TemplateData{Args: args})
	require.ErrorIs(t, err, receipts.ErrNoReceipt)

	partial := &maestrotype.Receipt{Provider: "twilio", ID: "SM1", Fields: map[string]string{"message_sid": "SM1"}}
	_, err = sms.RenderWording(tools.OutcomeSuccess, tools.TemplateData{Args: args, Receipt: partial})
	require.ErrorIs(t, err, receipts.ErrNoReceipt, "every declared receipt field must be present")

	full := &maestrotype.Receipt{Provider: "twilio", ID: "SM1", Status: "queued", Fields: map[string]string{"message_sid": "SM1", "status": "queued"}}
	got, err := sms.RenderWording(tools.OutcomeSuccess, tools.TemplateData{Args: args, Receipt: full})
	require.NoError(t, err)
	require.Equal(t, "I've sent the text; Twilio reports it queued.", got)

	got, err = sms.RenderWording(tools.OutcomeFailure, tools.TemplateData{Args: args})
	require.NoError(t, err)
	require.Equal(t, "I couldn't send the text.", got)
}

func TestRenderWordingHandBuiltToolCannotClaimWithoutReceipt(t *testing.T) {
	t.Parallel()
	tool := &tools.Tool{
		Name:     "liar",
		Delivery: maestrotype.DeliveryRealSync,
		Wording:  tools.Wording{Success: tools.MustParseTemplate("s", "Done, I've sent it.")},
	}
	receipt := &maestrotype.Receipt{ID: "x", Fields: map[string]string{}}
	_, err := tool.RenderWording(tools.OutcomeSuccess, tools.TemplateData{Receipt: receipt})
	require.ErrorIs(t, err, receipts.ErrNoReceipt, "a tool that declares no receipt fields proves nothing")
}

func TestRenderWordingDeferredNeedsNoReceipt(t *testing.T) {
	t.Parallel()
	c := demo(t)
	msg, _ := c.Tool("take_message")
	got, err := msg.RenderWording(tools.OutcomeSuccess, tools.TemplateData{Args: map[string]any{"message": "call me"}})
	require.NoError(t, err)
	require.Equal(t, "I'll make sure the team gets your message.", got)

	_, err = msg.RenderWording(tools.OutcomePending, tools.TemplateData{})
	require.ErrorContains(t, err, "no pending wording")
}

func TestDemoWordingRendersForEveryOutcome(t *testing.T) {
	t.Parallel()
	c := demo(t)
	// Every argument the demo wording reads, with a placeholder value.
	args := map[string]any{}
	for _, name := range []string{"tenant_id", "to", "amount_cents", "callback_number", "work_order_id", "refund_id"} {
		args[name] = name
	}
	for _, tool := range c.Tools() {
		for _, o := range []tools.Outcome{tools.OutcomeSuccess, tools.OutcomePending, tools.OutcomeFailure} {
			if tool.Wording.For(o) == nil {
				continue
			}
			data := tools.TemplateData{Args: args, Session: map[string]any{}}
			if o == tools.OutcomeSuccess && tool.Delivery == maestrotype.DeliveryRealSync {
				data.Receipt = receiptFor(tool)
			}
			got, err := tool.RenderWording(o, data)
			require.NoError(t, err, "%s %s", tool.Name, o)
			require.NotEmpty(t, got)
			require.NotContains(t, got, "<no value>")
		}
	}
}

func TestSuccessWordingMayReadThePayload(t *testing.T) {
	t.Parallel()
	const catalog = `
version: 1
tools:
  - name: balance
    description: Call when you need a tenant's balance.
    owner: billing
    effect: read
    delivery: readonly
    reversibility: none
    input_schema: {type: object, required: [id], properties: {id: {type: string}}}
    connector: {kind: http, service: api, method: GET, path: "/balances/{{pathescape .Args.id}}"}
    wording:
      success: "The balance is {{.Payload.balance_cents}} cents."
      failure: "I couldn't read the balance."
`
	c, err := tools.Load([]byte(catalog))
	require.NoError(t, err)
	tool, _ := c.Tool("balance")
	got, err := tool.RenderWording(tools.OutcomeSuccess, tools.TemplateData{Payload: map[string]any{"balance_cents": 1250}})
	require.NoError(t, err)
	require.Equal(t, "The balance is 1250 cents.", got)
}

// TestDemoWordingNeverPutsAStatusAfterIs keeps the demo's wording English:
// a provider status is often a participle ("succeeded"), so "refund re_1
// is {{.Receipt.Status}}" would read "refund re_1 is succeeded".
func TestDemoWordingNeverPutsAStatusAfterIs(t *testing.T) {
	t.Parallel()
	// "its status is {{.Receipt.Status}}" names the status as a label,
	// which reads as English whatever the status is.
	bare := regexp.MustCompile(`(\S+)\s+is\s*\{\{\s*\.Receipt\.Status\s*\}\}`)
	for _, tool := range demo(t).Tools() {
		for _, o := range []tools.Outcome{tools.OutcomeSuccess, tools.OutcomePending, tools.OutcomeFailure} {
			w := tool.Wording.For(o)
			if w == nil {
				continue
			}
			for _, m := range bare.FindAllStringSubmatch(w.String(), -1) {
				require.Equal(t, "status", m[1], "%s %s wording puts a bare status after \"is\": %q", tool.Name, o, w.String())
			}
		}
	}
}

func TestSafetyNoticeFollowsEveryWordingShortOfSuccess(t *testing.T) {
	t.Parallel()
	c, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	page, ok := c.Tool("escalate_to_human")
	require.True(t, ok)
	require.True(t, page.EmergencyCapable())
	emergency := tools.TemplateData{Args: map[string]any{"reason": "Water", "urgency": "emergency", "callback_number": "+14155550100"}}
	routine := tools.TemplateData{Args: map[string]any{"reason": "Water", "urgency": "routine", "callback_number": "+14155550100"}}
	const notice = "If this is an emergency, hang up and dial 911."

	failure, err := page.RenderWording(tools.OutcomeFailure, emergency)
	require.NoError(t, err)
	require.Equal(t, "I couldn't reach the on-call manager. "+notice, failure)
	pending, err := page.RenderWording(tools.OutcomePending, emergency)
	require.NoError(t, err)
	require.Contains(t, pending, notice)
	quiet, err := page.RenderWording(tools.OutcomeFailure, routine)
	require.NoError(t, err)
	require.NotContains(t, quiet, "911")

	partial := emergency
	partial.Parts = map[string]*maestrotype.Receipt{"email": {ID: "0100-abc"}}
	said, err := page.RenderWording(tools.OutcomePartial, partial)
	require.NoError(t, err)
	require.Equal(t, "I've paged the on-call manager by email (reference 0100-abc); the text page hasn't gone through yet. "+notice, said)
	_, err = page.RenderWording(tools.OutcomePartial, emergency)
	require.ErrorIs(t, err, receipts.ErrNoReceipt, "nothing went out: no partial wording")
}
