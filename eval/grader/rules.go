package grader

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Graded is what one run of a path left behind.
type Graded struct {
	// Observation is what the agent was told, as the ledger recorded it.
	Observation mt.Observation
	// Expected is the status and code the path calls for.
	Expected Outcome
	// Effects counts what the stand-ins hold after the run: messages,
	// emails, work orders and refunds, read from the receivers themselves.
	Effects int
	// Tool is the catalog row called; the success rules read its delivery,
	// receipt fields and success wording.
	Tool *tools.Tool
	// Latency is how long the run took, admission to final observation.
	Latency time.Duration
}

// Rule is one deterministic check of a run. Check returns "" when the run
// passes, or what is wrong.
type Rule struct {
	Name  string
	Check func(Graded) string
}

// Violation is a rule a run broke.
type Violation struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

// Rules are the recovery contract every error path must keep.
var Rules = []Rule{
	{"status", func(g Graded) string {
		// Anything else tells the agent something worked. A composite
		// tool whose part went out says so with a warning (ADR 14), and
		// only with partly_delivered, a receipt for each part that went
		// out, and the receivers holding it.
		s := g.Observation.Status
		if s == mt.StatusWarning && g.Observation.Code == mt.CodePartlyDelivered {
			return partlyDelivered(g)
		}
		if s != mt.StatusError && s != mt.StatusPending {
			return fmt.Sprintf("status %q; a failed call must be error or pending", s)
		}
		return ""
	}},
	codeRule,
	{"next-actions", func(g Graded) string {
		n := g.Observation.NextActions
		if n == nil {
			return "no next_actions"
		}
		var missing []string
		for _, f := range []struct{ name, text string }{
			{"root_cause", n.RootCause}, {"remediation", n.Remediation}, {"stop_condition", n.StopCondition},
		} {
			if strings.TrimSpace(f.text) == "" {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			return "empty " + strings.Join(missing, ", ")
		}
		return ""
	}},
	{"no-receipt", func(g Graded) string {
		if r := g.Observation.Receipt; r != nil {
			return fmt.Sprintf("carries a receipt from %s (%s)", r.Provider, r.ID)
		}
		return ""
	}},
	{"no-claim", func(g Graded) string {
		// What the agent says and reads must not tell the person it worked.
		// A partly_delivered warning tells what went out, and names each
		// part that did by its receipt.
		if delivered, ok := deliveredParts(g); ok {
			for name, id := range delivered {
				if !strings.Contains(g.Observation.Wording, id) {
					return fmt.Sprintf("wording %q does not name part %s by its receipt %s", g.Observation.Wording, name, id)
				}
			}
			return ""
		}
		for _, f := range []struct{ name, text string }{
			{"wording", g.Observation.Wording}, {"summary", g.Observation.Summary},
		} {
			if tools.PromisesDelivery(f.text) {
				return fmt.Sprintf("%s %q claims the effect", f.name, f.text)
			}
		}
		return ""
	}},
	{"no-effect", func(g Graded) string {
		// An error says nothing was done; the receivers must agree. A
		// pending outcome is unknown by definition, so it is not counted.
		if g.Observation.Status == mt.StatusError && g.Effects != 0 {
			return fmt.Sprintf("the observation is an error, but the providers hold %d effect(s)", g.Effects)
		}
		return ""
	}},
}

var codeRule = Rule{"code", func(g Graded) string {
	got := Outcome{g.Observation.Status, g.Observation.Code}
	if got != g.Expected {
		return fmt.Sprintf("%s, want %s", got, g.Expected)
	}
	return ""
}}

// Grade checks a run against every rule of its path: SuccessRules when
// success is expected, Rules otherwise.
func Grade(g Graded) []Violation {
	rules := Rules
	if g.Expected.Status == mt.StatusSuccess {
		rules = SuccessRules
	}
	var out []Violation
	for _, r := range rules {
		if why := r.Check(g); why != "" {
			out = append(out, Violation{Rule: r.Name, Detail: why})
		}
	}
	return out
}

// deliveredParts are the receipt IDs, by part, of a partly_delivered
// warning's delivered parts; ok is false for any other observation.
func deliveredParts(g Graded) (map[string]string, bool) {
	if g.Observation.Status != mt.StatusWarning || g.Observation.Code != mt.CodePartlyDelivered {
		return nil, false
	}
	var payload struct {
		Parts map[string]map[string]string `json:"parts"`
	}
	_ = json.Unmarshal(g.Observation.Payload, &payload)
	out := map[string]string{}
	for name, p := range payload.Parts {
		if p["state"] == "delivered" {
			out[name] = p["receipt_id"]
		}
	}
	return out, true
}

// partlyDelivered checks a partly_delivered warning: it names at least one
// part delivered, each with its receipt, and the receivers hold at least
// that many effects.
func partlyDelivered(g Graded) string {
	delivered, _ := deliveredParts(g)
	for name, id := range delivered {
		if id == "" {
			return fmt.Sprintf("part %s is delivered without a receipt", name)
		}
	}
	if len(delivered) == 0 {
		return "status \"warning\" (partly_delivered) names no part delivered with a receipt; a failed call must be error or pending"
	}
	if g.Effects < len(delivered) {
		return fmt.Sprintf("%d part(s) delivered, but the providers hold %d effect(s)", len(delivered), g.Effects)
	}
	return ""
}
