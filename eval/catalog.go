package eval

import (
	"slices"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// FenceCatalog runs Fence over every tool of a loaded catalog, then checks
// what only the whole catalog can show: that every record-deferred tool is
// delivered after the call by a real-sync tool whose receipt proves it,
// with a deadline and at least one fallback channel that proves its effect
// too, and
// that the transcript rules dispatch only to such tools. An empty result
// means the catalog passes.
func FenceCatalog(c *tools.Catalog) []Violation {
	var offered []string
	for _, a := range c.Agents() {
		offered = append(offered, a.Allowed()...)
	}
	return append(fenceCatalog(c.Tools(), c.PostCall()), FenceOffered(c.Tools(), offered)...)
}

// FenceOffered checks the tools on some agent's allowlist (offered) for
// what a model needs to choose them: a description that opens by saying
// when to call the tool. Tools no agent may call, such as compensations
// run by rollback, are not offered to a model and are not checked.
func FenceOffered(ts []*tools.Tool, offered []string) []Violation {
	var out []Violation
	for _, t := range ts {
		if !slices.Contains(offered, t.Name) || tools.PrescribesWhen(t.Description) {
			continue
		}
		f := &findings{tool: t.Name}
		f.add(RuleDescriptionNotPrescriptive, "description %q does not say when to call the tool: open with one of %q", t.Description, tools.WhenOpenings)
		out = append(out, f.list...)
	}
	return out
}

// fenceCatalog is FenceCatalog over parts, so the fence can be shown to
// bite on a catalog the loader would refuse.
func fenceCatalog(ts []*tools.Tool, pc *tools.PostCall) []Violation {
	out := Fence(ts)
	byName := make(map[string]*tools.Tool, len(ts))
	for _, t := range ts {
		byName[t.Name] = t
	}
	for _, t := range ts {
		if t.Delivery != maestrotype.DeliveryRecordDeferred {
			continue
		}
		f := &findings{tool: t.Name}
		d, ok := pc.Delivery(t.Name)
		if !ok {
			f.add(RuleDeferredUndelivered, "no post-call delivery: the agent says the team will get what it records, and nothing would deliver it")
		} else {
			if problem := unproven(byName[d.Tool]); problem != "" {
				f.add(RulePostCallWithoutReceipt, "delivered after the call by %q, which %s", d.Tool, problem)
			}
			if d.Deadline <= 0 {
				f.add(RuleDeferredWithoutFallback, "its delivery has no deadline, so an outage could hold the promise forever without anyone hearing of it")
			}
			if len(d.Fallbacks) == 0 {
				f.add(RuleDeferredWithoutFallback, "its delivery by %q has no fallback: if that channel refuses or stays down, the promise is broken", d.Tool)
			}
			for i, fb := range d.Fallbacks {
				if problem := unproven(byName[fb.Tool]); problem != "" {
					f.add(RulePostCallWithoutReceipt, "its fallback %d, %q, %s", i+1, fb.Tool, problem)
				}
				if fb.Deadline <= 0 {
					f.add(RuleDeferredWithoutFallback, "its fallback %d, %q, has no deadline", i+1, fb.Tool)
				}
			}
		}
		out = append(out, f.list...)
	}
	if pc != nil {
		for _, r := range pc.Rules {
			if problem := unproven(byName[r.Tool]); problem != "" {
				f := &findings{tool: r.Tool}
				f.add(RulePostCallWithoutReceipt, "post-call rule %q dispatches to it, but it %s", r.Name, problem)
				out = append(out, f.list...)
			}
		}
	}
	return out
}

// unproven says why a post-call target cannot prove its effect, or returns
// "" when it can.
func unproven(t *tools.Tool) string {
	switch {
	case t == nil:
		return "is not in the catalog"
	case t.Delivery != maestrotype.DeliveryRealSync:
		return "is " + string(t.Delivery) + ", not real-sync"
	case !t.Connector.PerformsEffect():
		return "performs nothing a provider can confirm"
	case len(t.ReceiptFields) == 0:
		return "declares no receipt fields"
	}
	return ""
}
