package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// goalsIntro names what the goals are judged against, above both the
// printed table and the markdown one.
const goalsIntro = "Goals (0: the bar every route must clear; 1-5: the voice-grade targets; 6: ledger work per call), judged against the matched bare baseline: the bare workflow using the Temporal features maestro's route uses " +
	"(read: " + pathEagerLocal + "; real-sync and compensable: " + pathEager + "; approval: " + pathSignal + ")."

// writeGoalTable prints the goal table and a line saying which goals were
// missed. A missed goal is reported, not an error.
func (rep report) writeGoalTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", goalsIntro)
	const row = "%-18s %-12s %4s %12s %14s  %-12s %s\n"
	fmt.Fprintf(&b, row, "goal", "op", "conc", "measured", "target", "result", "compared")
	for _, g := range rep.goals {
		fmt.Fprintf(&b, row, g.name, g.op, g.formatConcurrency(), g.formatMeasured(), g.formatTarget(), g.status, g.formatCompared())
	}
	b.WriteString(goalSummary(rep.goals) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// goalSummary counts the goals and names the missed ones.
func goalSummary(gs []goal) string {
	passed, failed, unmeasured := goalCounts(gs)
	s := fmt.Sprintf("Goals: %d passed, %d missed, %d not measured.", passed, failed, unmeasured)
	var missed []string
	for _, g := range gs {
		if g.status == goalFail {
			missed = append(missed, fmt.Sprintf("%s %s at %s", g.name, g.op, g.formatConcurrency()))
		}
	}
	if len(missed) > 0 {
		s += " Missed: " + strings.Join(missed, "; ") + "."
	}
	return s
}

// writeGoalsMarkdown writes the goal table as markdown, ready for the
// README.
func (rep report) writeGoalsMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", goalsIntro)
	b.WriteString("| goal | op | callers | measured | target | result | compared |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---|\n")
	for _, g := range rep.goals {
		mark := string(g.status)
		switch g.status {
		case goalPass:
			mark = "✅ PASS"
		case goalFail:
			mark = "❌ FAIL"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", g.name, g.op, g.formatConcurrency(),
			g.formatMeasured(), g.formatTarget(), mark, g.formatCompared())
	}
	fmt.Fprintf(&b, "\n%s\n", goalSummary(rep.goals))
	_, err := io.WriteString(w, b.String())
	return err
}

// goalsHeader names the goals.csv columns; a value that was not measured
// is empty.
var goalsHeader = []string{
	"goal", "op", "concurrency", "unit", "maestro", "baseline_path", "baseline",
	"measured", "measured_unit", "comparison", "target", "status",
}

func (rep report) writeGoalsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(goalsHeader); err != nil {
		return err
	}
	for _, g := range rep.goals {
		maestro, baseline, measured := "", "", ""
		if g.status != goalUnmeasured {
			maestro, measured = csvFloat(g.maestro, 3), csvFloat(g.measured, 3)
			if g.baselinePath != "" {
				baseline = csvFloat(g.baseline, 3)
			}
		}
		cmp := "<="
		if g.atLeast {
			cmp = ">="
		}
		target := ""
		if g.status != goalUnmeasured || g.unit != "events" {
			target = csvFloat(g.target, 3)
		}
		conc := ""
		if g.concurrency > 0 {
			conc = strconv.Itoa(g.concurrency)
		}
		measuredUnit := g.unit
		if g.isRatio() {
			measuredUnit = "ratio"
		}
		if err := cw.Write([]string{g.name, g.op, conc, g.unit, maestro, g.baselinePath, baseline,
			measured, measuredUnit, cmp, target, string(g.status)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
