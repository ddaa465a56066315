package grader

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// RunResult is one run of one path.
type RunResult struct {
	Status     mt.Status   `json:"status"`
	Code       mt.Code     `json:"code"`
	Violations []Violation `json:"violations,omitempty"`
	// LatencyMS is how long the run took, admission to final observation.
	LatencyMS float64 `json:"latency_ms"`
}

// Passed reports whether the run broke no rule.
func (r RunResult) Passed() bool { return len(r.Violations) == 0 }

// PathResult is every run of one path of one target.
type PathResult struct {
	Connector string      `json:"connector"`
	Tool      string      `json:"tool"`
	Path      Path        `json:"path"`
	Expected  Outcome     `json:"expected"`
	Results   []RunResult `json:"runs"`
	// Latency is over this tool's runs of this path.
	Latency Latency `json:"latency"`
}

// Passed reports pass^k: every run passed, not merely most.
func (p PathResult) Passed() bool {
	for _, r := range p.Results {
		if !r.Passed() {
			return false
		}
	}
	return len(p.Results) > 0
}

// Report is a whole grading run.
type Report struct {
	Runs  int          `json:"runs_per_path"`
	Paths []PathResult `json:"paths"`
	// LatencyByPath pools every tool's runs of each path.
	LatencyByPath []PathLatency `json:"latency_by_path"`
}

// PassRate is the share of paths that passed every run: pass^k over the
// paths. Anything below 1.0 is a failure.
func (r *Report) PassRate() float64 {
	if len(r.Paths) == 0 {
		return 0
	}
	passed := 0
	for _, p := range r.Paths {
		if p.Passed() {
			passed++
		}
	}
	return float64(passed) / float64(len(r.Paths))
}

// WriteTable prints one line per path and the pass^k figure.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CONNECTOR\tTOOL\tPATH\tEXPECTED\tRUNS\tPASS^%d\tP50\tP95\tDETAIL\n", r.Runs)
	passed := 0
	for _, p := range r.Paths {
		verdict := "FAIL"
		if p.Passed() {
			verdict = "PASS"
			passed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Connector, p.Tool, p.Path,
			p.Expected, p.runs(), verdict, ms(p.Latency.P50MS), ms(p.Latency.P95MS), p.firstViolation())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range r.LatencyByPath {
		if _, err := fmt.Fprintf(w, "latency %s: p50 %s, p95 %s\n", l.Path, ms(l.P50MS), ms(l.P95MS)); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "pass^%d = %.2f\ngrader: %d passed, %d failed\n", r.Runs, r.PassRate(), passed, len(r.Paths)-passed)
	return err
}

// runs marks each run: ✓ passed every rule, ✗ broke one.
func (p PathResult) runs() string {
	var b strings.Builder
	for _, r := range p.Results {
		if r.Passed() {
			b.WriteString("✓")
		} else {
			b.WriteString("✗")
		}
	}
	return b.String()
}

func (p PathResult) firstViolation() string {
	for i, r := range p.Results {
		if len(r.Violations) > 0 {
			v := r.Violations[0]
			return fmt.Sprintf("run %d: %s: %s", i+1, v.Rule, strings.Join(strings.Fields(v.Detail), " "))
		}
	}
	return ""
}

// String is the outcome as the table shows it: status/code, or the status
// alone when no code is due.
func (o Outcome) String() string {
	if o.Code == "" {
		return string(o.Status)
	}
	return string(o.Status) + "/" + string(o.Code)
}

func ms(v float64) string {
	return fmt.Sprintf("%.0fms", v)
}
