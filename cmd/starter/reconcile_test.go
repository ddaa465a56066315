package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func TestCLIReconcile(t *testing.T) {
	d := startDev(t)
	ops := []string{"--server", d.URL(), "--key", tools.DemoOpsKey}
	const key = "cli-3:mail"
	holdEmail(t, d.Store(), key)

	out, _, code := run(t, append(ops, "reconcile", "list")...)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, key)
	require.Contains(t, out, "email_property_manager")

	out, _, code = run(t, append(ops, "reconcile", "check", key)...)
	require.Equal(t, 3, code, "SES cannot be searched: %s", out)
	require.Contains(t, out, string(mt.CodeOutcomeUnknown))

	_, errOut, code := run(t, append(ops, "reconcile", "resolve", key, "--outcome", "maybe", "--reason", "r")...)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "--outcome")

	out, _, code = run(t, append(ops, "reconcile", "resolve", key, "--outcome", "not-delivered", "--reason", "absent from the SES sending log", "--json")...)
	require.Equal(t, 0, code, out)
	var r apitype.Reconciliation
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, string(mt.EffectFailed), r.Status)
	require.Equal(t, "not_delivered", r.Events[len(r.Events)-1].Kind)

	out, _, code = run(t, append(ops, "reconcile", "resolve", key, "--outcome", "delivered", "--reason", "changed my mind")...)
	require.Equal(t, 3, code, "decided once: %s", out)
	require.Contains(t, out, string(mt.CodeNotHeld))

	shown, _, code := run(t, append(ops, "reconcile", "show", key)...)
	require.Equal(t, 0, code, shown)
	require.Contains(t, shown, "operator:demo-manager: absent from the SES sending log")
}

// A text the agent reported sent that Twilio then reported undelivered is
// on ops' list, and on the session, with its status and error.
func TestCLIListsUndeliveredTexts(t *testing.T) {
	d := startDev(t)
	ops := []string{"--server", d.URL(), "--key", tools.DemoOpsKey}
	const to = "+14155550123"
	d.Standins().Twilio.Undeliverable(to)

	agent := apiclient.New(d.URL(), tools.DemoAgentKey, apiclient.Options{})
	// The caller's number is only the agent's word, so a manager approves.
	held, err := agent.Invoke(t.Context(), apitype.InvokeRequest{
		SessionID: "cli-4", Tool: "send_sms", OperationKey: "cli-4:sms",
		Args:           json.RawMessage(`{"to":"` + to + `","body":"on our way"}`),
		SessionContext: map[string]string{"caller_number": to},
	})
	require.NoError(t, err)
	require.True(t, held.Pending, held.Observation.Summary)
	manager := apiclient.New(d.URL(), tools.DemoOpsKey, apiclient.Options{})
	_, err = manager.Approve(t.Context(), held.ApprovalID, "caller confirmed the number")
	require.NoError(t, err)
	sent, err := agent.Wait(t.Context(), held.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, sent.State, sent.Observation.Summary)

	var out string
	require.Eventually(t, func() bool {
		var code int
		out, _, code = run(t, append(ops, "reconcile", "list")...)
		return code == 0 && strings.Contains(out, "cli-4:sms")
	}, 10*time.Second, 50*time.Millisecond, "the undelivered text never reached the list")
	require.Contains(t, out, "undelivered")
	require.Contains(t, out, "30003")

	shown, _, code := run(t, append(ops, "sessions", "show", "cli-4")...)
	require.Equal(t, 0, code, shown)
	require.Contains(t, shown, "undelivered to "+to+" (error 30003)")
	require.Contains(t, shown, "FOLLOW UP")
	require.Contains(t, shown, "caller_number = "+to+"  (agent-declared)")

	// Ops checked the number with the caller and vouch for it.
	shown, _, code = run(t, append(ops, "sessions", "set-fact", "cli-4", "caller_number", to)...)
	require.Equal(t, 0, code, shown)
	require.Contains(t, shown, "caller_number = "+to+"  (operator:demo-manager)")
	_, errOut, code := run(t, "--server", d.URL(), "--key", tools.DemoAgentKey, "sessions", "set-fact", "cli-4", "caller_number", to)
	require.Equal(t, 3, code, "an agent cannot vouch: %s", errOut)
}

// holdEmail leaves an email held for reconciliation, as a lost SES answer
// would, without waiting out a provider timeout.
func holdEmail(t *testing.T, s ledger.Store, key string) {
	t.Helper()
	hold(t, s, key, "email_property_manager", mt.RouteWrite, `{"summary":"No heat","tenant_id":"t_100"}`,
		`{"kind":"ses_email","settings":{"to":"pm@demo-properties.example","subject":"s","body":"No heat"}}`)
}

// hold leaves an effect of tool held for reconciliation, as a lost answer
// would.
func hold(t *testing.T, s ledger.Store, key, tool string, route mt.Route, args, before string) {
	t.Helper()
	ctx := t.Context()
	inv, _, err := s.InvocationInsert(ctx, ledger.Invocation{
		OperationKey: key, SessionID: "cli-3", AgentID: "voice-agent", Tool: tool,
		Args: json.RawMessage(args), ArgsHash: "h", Route: route, State: mt.InvocationRunning,
	})
	require.NoError(t, err)
	_, err = s.EffectClaim(ctx, ledger.EffectClaimParams{
		OperationKey: key, InvocationID: inv.ID, Tool: tool, PayloadHash: "h",
		Owner: "worker-1", LeaseTTL: time.Minute, BeforeState: json.RawMessage(before),
	})
	require.NoError(t, err)
	_, err = s.EffectReconcile(ctx, ledger.EffectReconcileParams{
		OperationKey: key, Owner: "worker-1", Status: mt.EffectNeedsReconciliation, Error: "the provider did not answer",
		Result: &mt.Observation{Status: mt.StatusPending, Summary: "held"},
		Event:  ledger.ReconciliationEvent{Kind: ledger.ReconciliationEscalated, Actor: "reconciler:worker-1", Reason: "the provider did not answer"},
	})
	require.NoError(t, err)
}

// Held money leads the list even when other held effects are older.
func TestCLIReconcileListsMoneyFirst(t *testing.T) {
	d := startDev(t)
	ops := []string{"--server", d.URL(), "--key", tools.DemoOpsKey}
	holdEmail(t, d.Store(), "cli-16:mail")
	hold(t, d.Store(), "cli-16:refund", "issue_refund", mt.RouteGated, `{"tenant_id":"t_100","amount_cents":2500,"reason":"r"}`,
		`{"kind":"http","settings":{"service":"sandbox","method":"POST","path":"/v1/refunds"}}`)

	out, _, code := run(t, append(ops, "reconcile", "list")...)
	require.Equal(t, 0, code, out)
	refund, mail := strings.Index(out, "cli-16:refund"), strings.Index(out, "cli-16:mail")
	require.NotEqual(t, -1, refund, out)
	require.NotEqual(t, -1, mail, out)
	require.Less(t, refund, mail, "money first, though the email is older:\n%s", out)

	shown, _, code := run(t, append(ops, "reconcile", "show", "cli-16:refund")...)
	require.Equal(t, 0, code, shown)
	require.Regexp(t, `paged\s+manager`, shown, "the approver role paged for held money")
}
