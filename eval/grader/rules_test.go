package grader_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/eval/grader"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func good() grader.Graded {
	return grader.Graded{
		Observation: mt.Observation{
			Status:  mt.StatusError,
			Code:    mt.CodeProviderUnavailable,
			Summary: "twilio stayed unavailable after retries; nothing was done",
			Wording: "I couldn't send the text.",
			NextActions: &mt.NextActions{
				RootCause:     "twilio unavailable (HTTP 503)",
				Remediation:   "Try once more later with a new operation key.",
				StopCondition: "Stop after one more failure and hand over to a human.",
			},
		},
		Expected: grader.Outcome{Status: mt.StatusError, Code: mt.CodeProviderUnavailable},
	}
}

func rules(vs []grader.Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Rule
	}
	return out
}

// Each rule must catch the observation it exists to catch, or a pass^3 of
// 1.0 would prove nothing.
func TestEveryRuleBites(t *testing.T) {
	t.Parallel()
	require.Empty(t, grader.Grade(good()))

	for name, tt := range map[string]struct {
		spoil func(*grader.Graded)
		rules []string
	}{
		"success":                       {func(g *grader.Graded) { g.Observation.Status = mt.StatusSuccess }, []string{"status", "code"}},
		"wrong code":                    {func(g *grader.Graded) { g.Observation.Code = mt.CodeProviderRejected }, []string{"code"}},
		"pending where an error is due": {func(g *grader.Graded) { g.Observation.Status = mt.StatusPending }, []string{"code"}},
		"no next actions":               {func(g *grader.Graded) { g.Observation.NextActions = nil }, []string{"next-actions"}},
		"blank stop condition":          {func(g *grader.Graded) { g.Observation.NextActions.StopCondition = " " }, []string{"next-actions"}},
		"receipt on failure": {func(g *grader.Graded) {
			g.Observation.Receipt = &mt.Receipt{Provider: "twilio", ID: "SM1"}
		}, []string{"no-receipt"}},
		"wording claims the effect":            {func(g *grader.Graded) { g.Observation.Wording = "I've sent the text." }, []string{"no-claim"}},
		"summary claims the effect":            {func(g *grader.Graded) { g.Observation.Summary = "The text was sent" }, []string{"no-claim"}},
		"error with an effect at the provider": {func(g *grader.Graded) { g.Effects = 1 }, []string{"no-effect"}},
	} {
		g := good()
		na := *g.Observation.NextActions
		g.Observation.NextActions = &na
		tt.spoil(&g)
		require.Equal(t, tt.rules, rules(grader.Grade(g)), name)
	}
}

// An unknown outcome may have had an effect: pending is not counted.
func TestPendingOutcomeIsNotHeldToNoEffect(t *testing.T) {
	t.Parallel()
	g := good()
	g.Observation.Status, g.Observation.Code = mt.StatusPending, mt.CodeOutcomeUnknown
	g.Expected = grader.Outcome{Status: mt.StatusPending, Code: mt.CodeOutcomeUnknown}
	g.Effects = 1
	require.Empty(t, grader.Grade(g))
}

// A composite tool whose part went out says so with a warning, and the
// grader holds it to the receipt of what went out.
func TestPartlyDeliveredWarning(t *testing.T) {
	t.Parallel()
	partly := func() grader.Graded {
		g := good()
		g.Observation.Status, g.Observation.Code = mt.StatusWarning, mt.CodePartlyDelivered
		g.Observation.Wording = "I've paged the on-call manager by email (reference 0100-e1); the text page hasn't gone through yet."
		g.Observation.Payload = []byte(`{"parts":{"email":{"state":"delivered","receipt_id":"0100-e1"},"sms":{"state":"not_delivered"}}}`)
		g.Expected = grader.Outcome{Status: mt.StatusWarning, Code: mt.CodePartlyDelivered}
		g.Effects = 1
		return g
	}
	require.Empty(t, grader.Grade(partly()))

	for name, tt := range map[string]struct {
		spoil func(*grader.Graded)
		rules []string
	}{
		"warning with another code": {func(g *grader.Graded) {
			g.Observation.Code = mt.CodeProviderUnavailable
			g.Expected.Code = mt.CodeProviderUnavailable
		}, []string{"status", "no-claim"}},
		"nothing delivered": {func(g *grader.Graded) {
			g.Observation.Payload = []byte(`{"parts":{"sms":{"state":"not_delivered"}}}`)
		}, []string{"status"}},
		"delivered without a receipt": {func(g *grader.Graded) {
			g.Observation.Payload = []byte(`{"parts":{"email":{"state":"delivered"}}}`)
		}, []string{"status"}},
		"nothing at the provider": {func(g *grader.Graded) { g.Effects = 0 }, []string{"status"}},
		"wording without the receipt": {func(g *grader.Graded) {
			g.Observation.Wording = "I've paged the on-call manager."
		}, []string{"no-claim"}},
	} {
		g := partly()
		tt.spoil(&g)
		require.Equal(t, tt.rules, rules(grader.Grade(g)), name)
	}
}

func TestPassCubedNeedsEveryRun(t *testing.T) {
	t.Parallel()
	fail := grader.RunResult{Violations: []grader.Violation{{Rule: "code", Detail: "x"}}}
	rep := &grader.Report{Runs: 3, Paths: []grader.PathResult{
		{Results: []grader.RunResult{{}, {}, {}}},
		{Results: []grader.RunResult{{}, fail, {}}},
	}}
	require.InDelta(t, 0.5, rep.PassRate(), 1e-9)
	require.False(t, rep.Paths[1].Passed())
}

// goodSuccess is a work order created and proven: each case below spoils
// it in one way.
func goodSuccess(t *testing.T) grader.Graded {
	t.Helper()
	c, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	tool, ok := c.Tool("create_work_order")
	require.True(t, ok)
	return grader.Graded{
		Observation: mt.Observation{
			Status:  mt.StatusSuccess,
			Summary: "create_work_order confirmed by http:sandbox (id wo_1, status open)",
			Wording: "I've created work order wo_1; its status is open.",
			Payload: []byte(`{"id":"wo_1","status":"open"}`),
			Source:  &mt.Source{System: "http", Tool: "create_work_order", OperationKey: "s:k", InvocationID: "inv_1"},
			Receipt: &mt.Receipt{Provider: "http:sandbox", ID: "wo_1", Status: "open",
				Fields: map[string]string{"resource_id": "wo_1", "status": "open"}},
		},
		Expected: grader.Outcome{Status: mt.StatusSuccess},
		Effects:  1,
		Tool:     tool,
	}
}

// A success is graded too: proven by a receipt, traceable, within the cap,
// and worded from the receipt.
func TestEverySuccessRuleBites(t *testing.T) {
	t.Parallel()
	require.Empty(t, grader.Grade(goodSuccess(t)))

	for name, tt := range map[string]struct {
		spoil func(*grader.Graded)
		rules []string
	}{
		"warning where success is due":  {func(g *grader.Graded) { g.Observation.Status = mt.StatusWarning }, []string{"code"}},
		"no source":                     {func(g *grader.Graded) { g.Observation.Source = nil }, []string{"source"}},
		"source without its invocation": {func(g *grader.Graded) { g.Observation.Source.InvocationID = "" }, []string{"source"}},
		"source names another tool":     {func(g *grader.Graded) { g.Observation.Source.Tool = "send_sms" }, []string{"source"}},
		"no receipt":                    {func(g *grader.Graded) { g.Observation.Receipt = nil }, []string{"receipt"}},
		"receipt without a declared field": {func(g *grader.Graded) {
			delete(g.Observation.Receipt.Fields, "status")
		}, []string{"receipt"}},
		"payload over the cap": {func(g *grader.Graded) {
			g.Observation.Payload = []byte(`"` + strings.Repeat("x", mt.MaxPayloadBytes) + `"`)
		}, []string{"payload-cap"}},
		"payload not JSON":                 {func(g *grader.Graded) { g.Observation.Payload = []byte("{") }, []string{"payload-cap"}},
		"wording not from the receipt":     {func(g *grader.Graded) { g.Observation.Wording = "I've created the work order." }, []string{"wording-from-receipt"}},
		"wording with another status":      {func(g *grader.Graded) { g.Observation.Wording = "I've created work order wo_1; its status is closed." }, []string{"wording-from-receipt"}},
		"success with nothing at provider": {func(g *grader.Graded) { g.Effects = 0 }, []string{"effect-held"}},
	} {
		g := goodSuccess(t)
		src, rcpt := *g.Observation.Source, *g.Observation.Receipt
		rcpt.Fields = map[string]string{"resource_id": "wo_1", "status": "open"}
		g.Observation.Source, g.Observation.Receipt = &src, &rcpt
		tt.spoil(&g)
		require.Equal(t, tt.rules, rules(grader.Grade(g)), name)
	}
}

// A read proves nothing was changed: it must carry no receipt.
func TestSuccessfulReadCarriesNoReceipt(t *testing.T) {
	t.Parallel()
	c, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	lookup, _ := c.Tool("lookup_tenant")
	g := goodSuccess(t)
	g.Tool, g.Effects = lookup, 0
	g.Observation.Source.Tool = "lookup_tenant"
	require.Equal(t, []string{"receipt"}, rules(grader.Grade(g)))
	g.Observation.Receipt = nil
	require.Empty(t, grader.Grade(g))
}
