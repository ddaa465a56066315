package grader_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/eval/grader"
	mt "github.com/maestro-run/maestro/maestrotype"
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
