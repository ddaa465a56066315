package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// writeTables prints the results table and the ratios table.
func (rep report) writeTables(w io.Writer) error {
	var b strings.Builder
	const row = "%-27s %-18s %4s %5s %4s %8s %8s %8s %8s %8s %8s %8s %7s %8s\n"
	fmt.Fprintf(&b, row, "scenario", "tool", "conc", "calls", "fail",
		"p50 ms", "p95 ms", "p99 ms", "calls/s", "wf ms", "act ms", "out ms", "events", "sess ev")
	for _, r := range rep.results {
		wf, act, out := "-", "-", "-"
		if r.path != pathDirect {
			wf, out = formatMS(ms(r.split.run)), formatMS(ms(r.split.outside))
			if r.split.activity > 0 {
				act = formatMS(ms(r.split.activity))
			}
		}
		fmt.Fprintf(&b, row, r.scenario, r.tool,
			fmt.Sprint(r.concurrency), fmt.Sprint(r.calls), fmt.Sprint(r.failed),
			formatMS(ms(r.stats.p50)), formatMS(ms(r.stats.p95)), formatMS(ms(r.stats.p99)),
			fmt.Sprintf("%.1f", r.stats.throughput), wf, act, out,
			formatEvents(r.events), formatEvents(r.sessionEvents))
	}
	b.WriteString(tableLegend)
	b.WriteString("\np50 ratios: maestro against its matched bare baseline (the goals' yardstick), plain temporal and direct\n")
	const ratioRow = "%-12s %5s %11s %-21s %12s %12s %10s %17s %17s %15s\n"
	fmt.Fprintf(&b, ratioRow, "op", "conc", "maestro ms", "baseline", "baseline ms", "temporal ms", "direct ms",
		"maestro/baseline", "maestro/temporal", "maestro/direct")
	for _, q := range rep.ratios {
		fmt.Fprintf(&b, ratioRow, q.op, fmt.Sprint(q.concurrency),
			formatMS(ms(q.maestro)), q.baselinePath, formatMS(ms(q.baseline)), formatMS(ms(q.temporal)), formatMS(ms(q.direct)),
			formatRatio(q.vsBaseline()), formatRatio(q.vsTemporal()), formatRatio(q.vsDirect()))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

const tableLegend = `
Latency is from request to result; for maestro/approval, from the operator's
approval to the refund's receipt. wf, act and out are medians: time inside
the workflow (from its start, or from the approval signal), inside its
activities, and outside the workflow (admission, waiting, the answer);
out is negative when maestro answered from its ledger before its
workflow's last task ran. events: history events of the workflow that ran each call; sess ev: the
session workflow's events divided by the calls it recorded.
`

func formatMS(x float64) string { return fmt.Sprintf("%.2f", x) }

// formatEvents shows a count that may be a fraction, or "-" where the path
// has none to count.
func formatEvents(n float64) string {
	switch {
	case n < 0:
		return "-"
	case n == math.Trunc(n):
		return fmt.Sprintf("%.0f", n)
	}
	return fmt.Sprintf("%.1f", n)
}

func formatRatio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", x)
}
