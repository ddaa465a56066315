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
	fmt.Fprintf(tw, "CONNECTOR\tTOOL\tPATH\tEXPECTED\tRUNS\tPASS^%d\tDETAIL\n", r.Runs)
	passed := 0
	for _, p := range r.Paths {
		verdict := "FAIL"
		if p.Passed() {
			verdict = "PASS"
			passed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\n", p.Connector, p.Tool, p.Path,
			p.Expected.Status, p.Expected.Code, p.runs(), verdict, p.firstViolation())
	}
	if err := tw.Flush(); err != nil {
		return err
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
