package eval

import (
	"errors"
	"fmt"
	"strings"

	"github.com/maestro-run/maestro/tools"
)

// Stages of a catalog check, in the order a start runs them.
const (
	// StageLoad is the loader: the file's syntax and the catalog's rules.
	StageLoad = "load"
	// StageKeys refuses the development keys published with maestro.
	StageKeys = "keys"
	// StageFence is the structural fence.
	StageFence = "fence"
)

// RuleDemoKeys: an agent or operator authenticates with a key published
// with maestro, which a server accepts only in dev mode.
const RuleDemoKeys Rule = "demo-keys"

// RuleParse: the file is not a single YAML catalog document.
const RuleParse Rule = "parse"

// Finding is one violation a catalog check found, with the rule it breaks.
type Finding struct {
	Stage string `json:"stage"`
	Rule  Rule   `json:"rule"`
	// Row and Field locate a loader finding in the file, e.g.
	// `tools[3] "issue_refund"` and "approval.timeout".
	Row   string `json:"row,omitempty"`
	Field string `json:"field,omitempty"`
	// Tool names the tool a fence finding is about.
	Tool   string `json:"tool,omitempty"`
	Detail string `json:"detail"`
}

func (f Finding) String() string {
	switch {
	case f.Row != "":
		return fmt.Sprintf("%s: %s: %s: %s", f.Rule, f.Row, f.Field, f.Detail)
	case f.Tool != "":
		return fmt.Sprintf("%s: %s: %s", f.Rule, f.Tool, f.Detail)
	}
	return fmt.Sprintf("%s: %s", f.Rule, f.Detail)
}

// CheckOptions tune CheckCatalog.
type CheckOptions struct {
	// Dev accepts the development keys, as a server in dev mode does.
	// Optional: default false, as in production.
	Dev bool
}

// CheckCatalog runs on a catalog file what a server runs on it at start,
// without starting one: the loader, the refusal of published keys, and
// the structural fence. A catalog the loader refuses is not fenced, as it
// would not start. It returns every finding and, when the loader accepted
// the file, the catalog; no findings means a server would start on it.
func CheckCatalog(data []byte, opts CheckOptions) (*tools.Catalog, []Finding) {
	c, err := tools.Load(data)
	if err != nil {
		return nil, loadFindings(err)
	}
	var out []Finding
	if holders := c.DemoKeyHolders(); !opts.Dev && len(holders) > 0 {
		out = append(out, Finding{Stage: StageKeys, Rule: RuleDemoKeys, Detail: fmt.Sprintf(
			"the development keys published with maestro authenticate %s; a server accepts them only in dev mode", strings.Join(holders, " and "))})
	}
	for _, v := range FenceCatalog(c) {
		out = append(out, Finding{Stage: StageFence, Rule: v.Rule, Tool: v.Tool, Detail: v.Detail})
	}
	return c, out
}

// loadFindings flattens the loader's joined errors, one finding each.
func loadFindings(err error) []Finding {
	var out []Finding
	var walk func(error)
	walk = func(err error) {
		var fe *tools.FieldError
		if errors.As(err, &fe) && err == error(fe) {
			out = append(out, Finding{Stage: StageLoad, Rule: Rule(fe.Rule), Row: fe.Row, Field: fe.Field, Detail: fe.Problem})
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if u := errors.Unwrap(err); u != nil {
			if _, ok := u.(interface{ Unwrap() []error }); ok {
				walk(u)
				return
			}
		}
		out = append(out, Finding{Stage: StageLoad, Rule: RuleParse, Detail: err.Error()})
	}
	walk(err)
	return out
}
