package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/server"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// smsToCaller texts the caller's own number, which the test catalog's rule
// approves on the session's stated caller_number.
const smsToCaller = `{"to":"+14155550100","body":"Your work order is booked."}`

// invokeAs calls a tool in the test's session the way a model's runtime
// does: with its tool-call ID and no operation key.
func (e *env) invokeAs(toolCallID, tool, args string) (apiclient.Response, error) {
	req := invokeRequest(e.session, tool, "", args)
	req.ToolCallID = toolCallID
	req.SessionContext = sessionFacts
	return e.agent.Invoke(e.ctx, req)
}

func TestReissuedCallWithANewToolCallIDTakesEffectOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)

	// A model re-issuing the same text under a fresh tool-call ID each
	// time, in another key order once, must not text the caller 13 times.
	var first apiclient.Response
	for i := 1; i <= 13; i++ {
		args := smsToCaller
		if i == 7 {
			args = `{"body":"Your work order is booked.", "to":"+14155550100"}`
		}
		resp, err := e.invokeAs(fmt.Sprintf("call_%d", i), "send_sms", args)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
		if i == 1 {
			first = resp
			continue
		}
		require.Equal(t, first.InvocationID, resp.InvocationID, "re-issue %d", i)
		require.Equal(t, first.Observation, resp.Observation)
		require.Equal(t, "call_1", resp.ToolCallID, "the answer names the call that took effect")
	}
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "one text, not 13")
	require.Regexp(t, "^"+regexp.QuoteMeta(e.session)+":send_sms:[0-9a-f]{32}$", first.OperationKey,
		"the key names session, tool and arguments, never the tool-call ID")
	require.Equal(t, "call_1", first.ToolCallID)

	// Other arguments are another effect.
	other, err := e.invokeAs("call_14", "send_sms", `{"to":"+14155550100","body":"Your plumber comes at 3pm."}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, other.State)
	require.NotEqual(t, first.InvocationID, other.InvocationID)
	require.Equal(t, 2, e.standins.Twilio.CountMessages())

	// An agent's own operation key still wins over the derived one.
	own, err := e.agent.Invoke(e.ctx, apitype.InvokeRequest{
		SessionID: e.session, Tool: "send_sms", Args: []byte(smsToCaller), OperationKey: e.key("second-confirmation"),
		ToolCallID: "call_15", SessionContext: sessionFacts,
	})
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, own.State)
	require.Equal(t, e.key("second-confirmation"), own.OperationKey)
	require.Equal(t, "call_15", own.ToolCallID)
	require.Equal(t, 3, e.standins.Twilio.CountMessages())

	// Without any tool-call ID the key is still derived from the effect.
	bare, err := e.invokeAs("", "send_sms", smsToCaller)
	require.NoError(t, err)
	require.Equal(t, first.InvocationID, bare.InvocationID)
	require.Equal(t, 3, e.standins.Twilio.CountMessages())
}

// withRepeatableSMS marks send_sms repeatable: identical texts may
// legitimately go out twice in one session.
func withRepeatableSMS(o *options) {
	o.catalog = []byte(strings.Replace(string(tools.DemoCatalogYAML),
		"  - name: send_sms\n", "  - name: send_sms\n    repeatable: true\n", 1))
}

func TestRepeatableToolTakesEffectOncePerToolCallID(t *testing.T) {
	t.Parallel()
	e := setup(t, withRepeatableSMS)

	seen := map[string]string{}
	for _, id := range []string{"call_a", "call_b", "call_a", "call_c", "call_b"} {
		resp, err := e.invokeAs(id, "send_sms", smsToCaller)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
		require.Equal(t, id, resp.ToolCallID)
		require.True(t, strings.HasSuffix(resp.OperationKey, ":"+id), resp.OperationKey)
		if prev, ok := seen[id]; ok {
			require.Equal(t, prev, resp.InvocationID, "a retry of one tool call is the same effect")
		}
		seen[id] = resp.InvocationID
	}
	require.Equal(t, 3, e.standins.Twilio.CountMessages(), "one text per tool call")

	// Repeats cannot be told apart without a tool-call ID.
	_, err := e.invokeAs("", "send_sms", smsToCaller)
	var apiErr *apiclient.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	require.Equal(t, mt.CodeInvalidRequest, apiErr.Observation.Code)
	require.Equal(t, "operation_key or tool_call_id is required to call send_sms; nothing was run", apiErr.Observation.Summary)
	require.Contains(t, apiErr.Observation.NextActions.RootCause, "send_sms is repeatable")
	require.Equal(t, 3, e.standins.Twilio.CountMessages())
}

func TestReadIsRepeatedPerToolCallID(t *testing.T) {
	t.Parallel()
	e := setup(t)

	// A read has no effect to duplicate, and a later lookup must not be
	// answered with an earlier result.
	args := `{"tenant_id":"t_100"}`
	first, err := e.invokeAs("call_1", "lookup_tenant", args)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, first.State, "%+v", first.Observation)
	second, err := e.invokeAs("call_2", "lookup_tenant", args)
	require.NoError(t, err)
	require.NotEqual(t, first.InvocationID, second.InvocationID)
	retried, err := e.invokeAs("call_2", "lookup_tenant", args)
	require.NoError(t, err)
	require.Equal(t, second.InvocationID, retried.InvocationID)

	// Without either, the refusal says what the call needs, as the API
	// table does.
	_, err = e.invokeAs("", "lookup_tenant", args)
	var apiErr *apiclient.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	require.Equal(t, "operation_key or tool_call_id is required to call lookup_tenant; nothing was run", apiErr.Observation.Summary)
	require.Contains(t, apiErr.Observation.NextActions.RootCause, "lookup_tenant is a read")
}

// restartWith starts another maestro on the test's ledger with catalog,
// as a deploy would, and returns an operator client for it.
func (e *env) restartWith(catalog []byte) *apiclient.Client {
	e.t.Helper()
	cat, err := tools.Load(catalog)
	require.NoError(e.t, err)
	conns, err := connectors.NewSet(e.standins.TwilioConfig(), e.standins.SESConfig(),
		connectors.HTTPConfig{Services: e.standins.HTTPServices(), Timeout: 5 * time.Second})
	require.NoError(e.t, err)
	svc, err := server.StartCore(e.ctx, server.CoreConfig{
		Store:      e.store,
		Catalog:    cat,
		Temporal:   e.temporal,
		Connectors: conns,
		HTTPAddr:   "127.0.0.1:0",
		TaskQueue:  "tq-" + randomID(),
		Logger:     slog.New(slog.DiscardHandler),
	})
	require.NoError(e.t, err)
	e.t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = svc.Stop(stopCtx)
	})
	return apiclient.New(svc.URL(), tools.DemoOpsKey, apiclient.Options{HTTPClient: openAPIClient(e.t)})
}

func TestAuditJudgesAMoneyCallByTheClassItRanUnder(t *testing.T) {
	t.Parallel()
	e := setup(t)

	pending := e.requestRefund("refund")
	_, err := e.ops.Approve(e.ctx, pending.ApprovalID, "duplicate confirmed in ledger")
	require.NoError(t, err)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	inv, err := e.store.InvocationGet(e.ctx, done.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.EffectMoney, inv.EffectClass, "frozen at admission")
	require.NotEmpty(t, inv.CatalogVersion)

	// A refund that ran with no approval, as a worker records one.
	rogue := e.key("rogue-refund")
	_, err = e.store.EffectClaim(e.ctx, ledger.EffectClaimParams{
		OperationKey: rogue, InvocationID: "inv_rogue", Tool: "issue_refund", PayloadHash: "h", Owner: "rogue",
		LeaseTTL: time.Minute, EffectClass: mt.EffectMoney, CatalogVersion: inv.CatalogVersion,
	})
	require.NoError(t, err)
	require.NoError(t, e.store.EffectSettle(e.ctx, ledger.EffectSettleParams{OperationKey: rogue, Owner: "rogue", Status: mt.EffectSucceeded}))

	type finding struct{ Kind, OperationKey, Tool string }
	audit := func(ops *apiclient.Client) []finding {
		rep, err := ops.Audit(e.ctx)
		require.NoError(t, err)
		var got []finding
		for _, f := range rep.Findings {
			got = append(got, finding{f.Kind, f.OperationKey, f.Tool})
		}
		return got
	}
	require.Equal(t, []finding{{ledger.AuditNoApproval, rogue, "issue_refund"}}, audit(e.ops))

	// The next deploy reclassifies refunds as a plain write; the one after
	// drops the tool. Neither hides the refunds that moved money.
	refundCompensation := "    compensation:\n      tool: cancel_refund\n      args:\n        refund_id: \"{{.Receipt.ID}}\"\n"
	asWrite := strings.Replace(strings.Replace(string(tools.DemoCatalogYAML),
		"    effect: money\n    delivery: real-sync\n    reversibility: compensable",
		"    effect: write\n    delivery: real-sync\n    reversibility: irreversible", 1), refundCompensation, "", 1)
	require.NotContains(t, asWrite, refundCompensation)
	flagged := []finding{
		{ledger.AuditClassChanged, done.OperationKey, "issue_refund"},
		{ledger.AuditNoApproval, rogue, "issue_refund"},
	}
	if rogue < done.OperationKey {
		flagged[0], flagged[1] = flagged[1], flagged[0]
	}
	require.Equal(t, flagged, audit(e.restartWith([]byte(asWrite))))

	dropped := strings.Replace(string(tools.DemoCatalogYAML), "      - issue_refund\n", "", 1)
	start := strings.Index(dropped, "  - name: issue_refund\n")
	end := strings.Index(dropped, "  # The compensation of issue_refund.")
	require.Positive(t, start)
	require.Greater(t, end, start)
	dropped = dropped[:start] + dropped[end:]
	require.Equal(t, flagged, audit(e.restartWith([]byte(dropped))))
}
