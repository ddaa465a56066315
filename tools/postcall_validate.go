package tools

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/maestro-run/maestro/maestrotype"
)

// postCall checks the post-call section: every record-deferred tool is
// delivered, and all post-call work is performed by real-sync tools the
// post-call agent may call, with arguments those tools take.
func (v *validator) postCall() {
	p := v.p
	pc := v.c.postCall
	var deferred []string
	for _, t := range v.c.sorted {
		if t.Delivery == maestrotype.DeliveryRecordDeferred {
			deferred = append(deferred, t.Name)
		}
	}
	if pc == nil {
		if len(deferred) > 0 {
			p.add("catalog", "postcall", "required: %s record intents during the call, and only the postcall section says how they are delivered after it",
				strings.Join(deferred, ", "))
		}
		return
	}
	agent := v.postCallAgent(pc.Agent)
	delivered := make(map[string]string)
	for i, d := range pc.Deliveries {
		v.delivery(rowName("postcall.deliveries", i, d.From), d, agent, delivered)
	}
	for _, name := range deferred {
		if _, ok := delivered[name]; !ok {
			p.add("catalog", "postcall.deliveries", "record-deferred tool %q has no delivery, so what it records would reach nobody: add one from it to a real-sync tool", name)
		}
	}
	names := make(map[string]string)
	for i, r := range pc.Rules {
		v.rule(rowName("postcall.rules", i, r.Name), r, agent, names)
	}
	if u := pc.Urgent; u != nil {
		if len(u.Any) == 0 && !slices.ContainsFunc(pc.Rules, func(r Rule) bool { return r.Urgent }) {
			p.add("catalog", "postcall.urgent.any", "required: the phrases that make work urgent (or mark a rule urgent: true)")
		}
		for i, phrase := range u.Any {
			if !strings.ContainsFunc(phrase, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) {
				p.add("catalog", fmt.Sprintf("postcall.urgent.any[%d]", i), "want a phrase with at least one letter or digit, got %q", phrase)
			}
		}
		if u.Deadline <= 0 {
			p.add("catalog", "postcall.urgent.deadline", "required: how long urgent work may wait on one channel (e.g. 5m)")
		}
	} else if slices.ContainsFunc(pc.Rules, func(r Rule) bool { return r.Urgent }) {
		p.add("catalog", "postcall.urgent", "required: a rule is urgent, and only this section says how short an urgent deadline is")
	}
}

func (v *validator) isPostCallAgent(a *Agent) bool {
	return v.c.postCall != nil && v.c.postCall.Agent != "" && a.ID == v.c.postCall.Agent
}

// postCallAgent checks the agent post-call work is dispatched as and
// returns it, or nil when there is none to check against.
func (v *validator) postCallAgent(id string) *Agent {
	p := v.p
	if id == "" {
		p.add("catalog", "postcall.agent", "required: the agent whose allowlist post-call work is dispatched under")
		return nil
	}
	i := slices.IndexFunc(v.c.agents, func(a *Agent) bool { return a.ID == id })
	if i < 0 {
		p.add("catalog", "postcall.agent", "unknown agent %q", id)
		return nil
	}
	a := v.c.agents[i]
	row := rowName("agents", i, a.ID)
	if a.hasKey {
		p.add(row, "api_key_sha256", "must be absent: %q is the post-call agent, and a key would let a caller from outside act as it", id)
	}
	for _, name := range a.allow {
		if t, ok := v.c.tools[name]; ok && t.Delivery == maestrotype.DeliveryRecordDeferred {
			p.add(row, "allow", "%q is the post-call agent, which runs once the call is over: it cannot record %s for after the call", id, name)
		}
	}
	return a
}

func (v *validator) delivery(row string, d Delivery, agent *Agent, delivered map[string]string) {
	p := v.p
	from, ok := v.c.tools[d.From]
	switch {
	case d.From == "":
		p.add(row, "from", "required: the record-deferred tool whose intents this delivers")
	case !ok:
		p.add(row, "from", "unknown tool %q", d.From)
	case from.Delivery != maestrotype.DeliveryRecordDeferred:
		p.add(row, "from", "%s is %s: only record-deferred tools are delivered after the call", d.From, from.Delivery)
	case delivered[d.From] != "":
		p.add(row, "from", "%s is already delivered by %s", d.From, delivered[d.From])
	default:
		delivered[d.From] = row
	}
	var readable []string
	if ok && from.InputSchema != nil {
		readable = from.InputSchema.properties()
	}
	target := v.postCallTarget(row, d.Tool, agent)
	v.postCallArgs(row, d.Args, target, readable, d.From+"'s input_schema")
	seen := map[string]bool{d.Tool: true}
	for i, f := range d.Fallbacks {
		frow := fmt.Sprintf("%s.fallbacks[%d]", row, i)
		if seen[f.Tool] {
			p.add(frow, "tool", "%s is already a channel of this delivery: a fallback is another way to reach someone", f.Tool)
		}
		seen[f.Tool] = true
		target := v.postCallTarget(frow, f.Tool, agent)
		v.postCallArgs(frow, f.Args, target, readable, d.From+"'s input_schema")
	}
}

func (v *validator) rule(row string, r Rule, agent *Agent, names map[string]string) {
	p := v.p
	switch {
	case !toolNameRE.MatchString(r.Name):
		p.add(row, "name", "want lower_snake_case, at most 64 characters, got %q: it becomes part of work item keys", r.Name)
	case names[r.Name] != "":
		p.add(row, "name", "duplicate of %s", names[r.Name])
	default:
		names[r.Name] = row
	}
	if strings.TrimSpace(r.Speaker) == "" {
		p.add(row, "speaker", "required: whose turns the rule reads (e.g. caller)")
	}
	if len(r.Any) == 0 {
		p.add(row, "any", "required: at least one phrase that triggers the rule")
	}
	for i, phrase := range r.Any {
		if !strings.ContainsFunc(phrase, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) {
			p.add(row, fmt.Sprintf("any[%d]", i), "want a phrase with at least one letter or digit, got %q", phrase)
		}
	}
	target := v.postCallTarget(row, r.Tool, agent)
	v.postCallArgs(row, r.Args, target, ruleArgs, "a transcript turn")
}

// postCallTarget checks the tool post-call work is dispatched to and
// returns it, or nil when it does not exist.
func (v *validator) postCallTarget(row, name string, agent *Agent) *Tool {
	p := v.p
	if name == "" {
		p.add(row, "tool", "required: the real-sync tool that performs the work")
		return nil
	}
	t, ok := v.c.tools[name]
	if !ok {
		p.add(row, "tool", "unknown tool %q", name)
		return nil
	}
	if t.Delivery != maestrotype.DeliveryRealSync {
		p.add(row, "tool", "%s is %s: post-call work is performed by a real-sync tool, whose receipt proves it happened", name, t.Delivery)
	}
	if agent != nil && !agent.Allows(name) {
		p.add(row, "tool", "the post-call agent %q may not call %s: add it to that agent's allow list", agent.ID, name)
	}
	return t
}

// postCallArgs checks argument templates against the tool that takes them
// and the data they render from: readable lists the .Args keys available
// (nil when unknown) and source says where they come from.
func (v *validator) postCallArgs(row string, args map[string]*Template, target *Tool, readable []string, source string) {
	p := v.p
	var schema *Schema
	if target != nil {
		schema = target.InputSchema
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		field := "args." + name
		if schema != nil {
			props := schema.properties()
			switch {
			case props != nil && !slices.Contains(props, name):
				p.add(row, field, "%s takes no argument %q (it takes %s)", target.Name, name, strings.Join(props, ", "))
			case !schema.acceptsString(name):
				p.add(row, field, "%s does not take %q as a string, and post-call arguments render as strings", target.Name, name)
			}
		}
		for _, path := range args[name].paths() {
			ref := "." + strings.Join(path, ".")
			switch path[0] {
			case rootArgs:
				if len(path) > 1 && readable != nil && !slices.Contains(readable, path[1]) {
					p.add(row, field, "reads %s, which %s does not declare (it declares %s)", ref, source, strings.Join(readable, ", "))
				}
			case rootSession:
				if len(path) > 1 && !slices.Contains(v.c.sessionFactNames(), path[1]) {
					p.add(row, field, "reads %s, which session_facts does not declare (%s)", ref, v.describeSessionFacts())
				}
			default:
				p.add(row, field, "reads %s; post-call templates see .Args and .Session", ref)
			}
		}
	}
	if schema != nil {
		for _, name := range schema.required() {
			if _, ok := args[name]; !ok && !p.already(row, "args."+name) {
				p.add(row, "args", "%s requires %q", target.Name, name)
			}
		}
	}
}
