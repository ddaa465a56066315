package tools

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/maestro-run/maestro/maestrotype"
)

// FieldError is one problem with one field of one catalog row.
type FieldError struct {
	// Row names the row by list position and name: `tools[3] "issue_refund"`,
	// `postcall.rules[0] "maintenance"`, or "catalog" for top-level fields.
	Row string
	// Field is the dotted path within the row, e.g. "approval.approver_role".
	Field   string
	Problem string
	// Rule names the rule broken, stable for scripts: "unclassified",
	// "deferred-past-tense", "template-field-may-be-absent", or the
	// field's first segment (e.g. "receipt", "approval").
	Rule string
}

func (e *FieldError) Error() string {
	return e.Row + ": " + e.Field + ": " + e.Problem
}

// problems collects every FieldError so an author sees them all at once.
type problems struct {
	errs     []error
	reported map[string]bool
}

func (p *problems) add(row, field, format string, args ...any) {
	p.addRule(fieldRule(field), row, field, format, args...)
}

// addRule is add for a problem whose rule is not the field's own.
func (p *problems) addRule(rule, row, field, format string, args ...any) {
	if p.reported == nil {
		p.reported = make(map[string]bool)
	}
	p.reported[row+"\x00"+field] = true
	p.errs = append(p.errs, &FieldError{Row: row, Field: field, Problem: fmt.Sprintf(format, args...), Rule: rule})
}

// Rules the loader names beyond a field's own.
const (
	// RuleUnclassified: effect, delivery or reversibility is missing or
	// unknown.
	RuleUnclassified = "unclassified"
	// RuleDeferredPastTense: record-deferred wording claims as done what
	// is delivered after the call.
	RuleDeferredPastTense = "deferred-past-tense"
	// RuleTemplateMayBeAbsent: a template reads an argument input_schema
	// does not require, so the render can fail.
	RuleTemplateMayBeAbsent = "template-field-may-be-absent"
	// RuleTemplateReference: a template reads data that will not exist
	// when it renders.
	RuleTemplateReference = "template-reference"
)

// fieldRule is the rule a field's problems break unless said otherwise:
// the field's first segment, e.g. "receipt" for "receipt.fields[0]".
func fieldRule(field string) string {
	if i := strings.IndexAny(field, ".["); i >= 0 {
		field = field[:i]
	}
	return strings.ReplaceAll(field, "_", "-")
}

// already reports whether a field was reported, typically because it failed
// to parse; rules that would only repeat that problem skip it.
func (p *problems) already(row, field string) bool {
	return p.reported[row+"\x00"+field]
}

func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	noun := "problems"
	if len(p.errs) == 1 {
		noun = "problem"
	}
	return fmt.Errorf("error loading tool catalog (%d %s):\n%w", len(p.errs), noun, errors.Join(p.errs...))
}

// validator holds the rules a loaded catalog must satisfy. Each rule
// reports against the row and field an author has to change.
type validator struct {
	p *problems
	c *Catalog
}

// toolNameRE keeps names usable as MCP tool names and database keys.
var toolNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

func (v *validator) tools(rows []toolRow) {
	for _, r := range rows {
		v.tool(r.row, r.tool)
		v.notifyFields(r.row, r.tool)
		v.moneyFields(r.row, r.tool)
	}
}

func (v *validator) tool(row string, t *Tool) {
	p := v.p
	if !toolNameRE.MatchString(t.Name) {
		p.add(row, "name", "want lower_snake_case, at most 64 characters, got %q", t.Name)
	}
	if t.Version < 1 {
		p.add(row, "version", "must be at least 1")
	}
	if strings.TrimSpace(t.Description) == "" {
		p.add(row, "description", "required: tell the agent when to call the tool")
	}
	if strings.TrimSpace(t.Owner) == "" {
		p.add(row, "owner", "required: the team that owns the downstream system assigns the effect")
	}
	if slices.Contains(t.RiskTags, "") {
		p.add(row, "risk_tags", "tags must not be empty")
	}
	if !v.classification(row, t) {
		// Every later rule reads the classification; checking them against
		// a broken one would bury the real problem under its echoes.
		v.requiredWording(row, t)
		return
	}
	v.connector(row, t)
	v.receipt(row, t)
	v.approval(row, t)
	v.vouchRoles(row, t)
	v.compensation(row, t)
	v.stateReads(row, t)
	v.onUnknown(row, t)
	v.wording(row, t)
	v.canary(row, t)
}

// classification enforces the taxonomy: every tool says what it costs when
// it goes wrong, when its effect happens, and whether it can be undone. It
// reports whether the three fields are set and consistent.
func (v *validator) classification(row string, t *Tool) bool {
	p := v.p
	ok := checkEnum(p, row, "effect", string(t.Effect), t.Effect.Valid(), "read, write or money")
	ok = checkEnum(p, row, "delivery", string(t.Delivery), t.Delivery.Valid(), "readonly, real-sync or record-deferred") && ok
	ok = checkEnum(p, row, "reversibility", string(t.Reversibility), t.Reversibility.Valid(), "none, compensable or irreversible") && ok
	if !ok {
		return false
	}
	inconsistent := func(field, format string, args ...any) {
		p.add(row, field, format, args...)
		ok = false
	}
	if t.Effect == maestrotype.EffectRead {
		if t.Delivery != maestrotype.DeliveryReadonly {
			inconsistent("delivery", "a read has no side effect, so its delivery is readonly, not %s", t.Delivery)
		}
		if t.Reversibility != maestrotype.ReversibilityNone {
			inconsistent("reversibility", "a read changes nothing, so its reversibility is none, not %s", t.Reversibility)
		}
		return ok
	}
	if t.Delivery == maestrotype.DeliveryReadonly {
		inconsistent("delivery", "a %s has a side effect: real-sync or record-deferred", t.Effect)
	}
	if t.Reversibility == maestrotype.ReversibilityNone {
		inconsistent("reversibility", "a %s is either compensable or irreversible", t.Effect)
	}
	if t.Effect == maestrotype.EffectMoney && t.Delivery == maestrotype.DeliveryRecordDeferred {
		inconsistent("delivery", "money moves now, behind a human, with a receipt: it cannot be record-deferred")
	}
	return ok
}

func checkEnum(p *problems, row, field, value string, valid bool, want string) bool {
	switch {
	case value == "":
		p.addRule(RuleUnclassified, row, field, "required (%s)", want)
	case !valid:
		p.addRule(RuleUnclassified, row, field, "unknown value %q (want %s)", value, want)
	}
	return valid
}

// connector checks that the connector can do what the classification
// claims: reads change nothing, real-sync tools perform a verifiable
// effect, and record-deferred tools perform none during the call.
func (v *validator) connector(row string, t *Tool) {
	p := v.p
	c := t.Connector
	if !c.Kind.Valid() || p.already(row, "connector.method") {
		return
	}
	switch {
	case t.Effect == maestrotype.EffectRead && (c.PerformsEffect() || c.Kind == maestrotype.KindDeferred):
		p.add(row, "connector", "a read must not perform an effect: use an http connector with method GET")
	case t.Delivery == maestrotype.DeliveryRealSync && !c.PerformsEffect():
		p.add(row, "connector", "real-sync needs a connector that performs a verifiable effect; %s does not", describeConnector(c))
	case t.Delivery == maestrotype.DeliveryRecordDeferred && c.Kind != maestrotype.KindDeferred:
		p.add(row, "connector.kind", "record-deferred tools are delivered after the call: use kind deferred, not %s", c.Kind)
	case t.Delivery != maestrotype.DeliveryRecordDeferred && c.Kind == maestrotype.KindDeferred:
		p.add(row, "connector.kind", "kind deferred performs nothing, so only record-deferred tools may use it")
	}
	if c.Body != nil && (c.Method() == "GET" || c.Method() == "DELETE") {
		p.add(row, "connector.body", "a %s request carries no body", c.Method())
	}
	for name, tmpl := range c.Settings {
		v.templateRefs(row, "connector."+name, t, tmpl, beforeCall)
	}
	for name, tmpl := range c.Body {
		v.templateRefs(row, "connector.body."+name, t, tmpl, beforeCall)
	}
}

func describeConnector(c Connector) string {
	if c.Kind == maestrotype.KindHTTP {
		return "an http " + c.Method()
	}
	return "kind " + string(c.Kind)
}

// receipt checks that a real-sync tool names the fields proving its effect
// and that its connector really produces them.
func (v *validator) receipt(row string, t *Tool) {
	p := v.p
	if p.already(row, "receipt.fields") {
		return
	}
	if t.Delivery != maestrotype.DeliveryRealSync {
		if len(t.ReceiptFields) > 0 {
			p.add(row, "receipt", "only real-sync tools return a receipt; %s tools have none", t.Delivery)
		}
		return
	}
	if !t.Connector.PerformsEffect() {
		return // reported by the connector rule
	}
	produced := t.Connector.ReceiptFields()
	if len(t.ReceiptFields) == 0 {
		p.add(row, "receipt.fields", "real-sync tools must name the receipt fields that prove the effect (%s produces %s)",
			describeConnector(t.Connector), strings.Join(produced, ", "))
		return
	}
	for i, f := range t.ReceiptFields {
		if !slices.Contains(produced, f) {
			p.add(row, fmt.Sprintf("receipt.fields[%d]", i), "%s does not produce %q (it produces %s)",
				describeConnector(t.Connector), f, strings.Join(produced, ", "))
		}
	}
	for _, f := range t.Connector.ProofFields() {
		if !slices.Contains(t.ReceiptFields, f) {
			p.add(row, "receipt.fields", "must include %s, which identifies the effect at the provider", f)
		}
	}
}

// approval checks the gate. Money always needs a human; an irreversible
// write needs a human or a condition under which it may proceed without
// one; nothing else is gated, so a policy there would never run.
func (v *validator) approval(row string, t *Tool) {
	p := v.p
	a := t.Approval
	gated := t.Route() == maestrotype.RouteGated
	if !gated {
		if a != nil {
			p.add(row, "approval", "the route is %s, not gated: this policy would never run", t.Route())
		}
		return
	}
	if a == nil {
		if t.Effect == maestrotype.EffectMoney {
			p.add(row, "approval.approver_role", "money tools need an approver role")
		} else {
			p.add(row, "approval", "irreversible writes are gated: set approver_role, auto_approve_when, or both")
		}
		return
	}
	if t.Effect == maestrotype.EffectMoney {
		if a.ApproverRole == "" {
			p.add(row, "approval.approver_role", "money tools need an approver role")
		}
		if a.OnTimeout == OnTimeoutAutoApprove {
			p.add(row, "approval.on_timeout", "money never auto-approves: use timed_out")
		}
		if a.AutoApproveWhen != "" {
			p.add(row, "approval.auto_approve_when", "money always needs a human: remove the condition")
		}
	} else if a.ApproverRole == "" && a.AutoApproveWhen == "" {
		p.add(row, "approval", "irreversible writes are gated: set approver_role, auto_approve_when, or both")
	}
	switch a.OnTimeout {
	case "", OnTimeoutTimedOut, OnTimeoutAutoApprove:
	default:
		p.add(row, "approval.on_timeout", "unknown value %q (want timed_out or auto_approve)", a.OnTimeout)
	}
	if a.ApproverRole != "" {
		if a.Timeout <= 0 && !p.already(row, "approval.timeout") {
			p.add(row, "approval.timeout", "required: how long to wait for the %s (e.g. 10m)", a.ApproverRole)
		}
		if !slices.ContainsFunc(v.c.operators, func(o *Operator) bool { return o.HasRole(a.ApproverRole) }) {
			p.add(row, "approval.approver_role", "no operator holds role %q, so nobody could approve", a.ApproverRole)
		}
	} else if t.Effect != maestrotype.EffectMoney && (a.Timeout != 0 || a.OnTimeout != "") {
		p.add(row, "approval.timeout", "there is no approver_role to wait for: remove timeout and on_timeout")
	}
}

// compensation checks that a compensable tool names a tool that can undo
// it, with the arguments that tool needs.
func (v *validator) compensation(row string, t *Tool) {
	p := v.p
	comp := t.Compensation
	if t.Reversibility != maestrotype.ReversibilityCompensable {
		if comp != nil {
			p.add(row, "compensation", "only compensable tools name a compensation; this one is %s", t.Reversibility)
		}
		return
	}
	if comp == nil || comp.Tool == "" {
		p.add(row, "compensation.tool", "compensable tools must name the tool that undoes them")
		return
	}
	target, ok := v.c.tools[comp.Tool]
	switch {
	case !ok:
		p.add(row, "compensation.tool", "unknown tool %q", comp.Tool)
		return
	case target == t:
		p.add(row, "compensation.tool", "a tool cannot compensate itself")
		return
	case target.Delivery != maestrotype.DeliveryRealSync || !target.Connector.PerformsEffect():
		p.add(row, "compensation.tool", "%s must be real-sync, so the undo is proven by a receipt", comp.Tool)
	case target.Reversibility == maestrotype.ReversibilityCompensable:
		p.add(row, "compensation.tool", "%s is itself compensable; an undo is not undone, so it must be irreversible", comp.Tool)
	}
	switch {
	case comp.Version == 0:
		// Omitted: the undo entry records the version current at load.
		comp.Version = target.Version
	case comp.Version != target.Version:
		p.add(row, "compensation.version", "%s is at version %d, not %d", comp.Tool, target.Version, comp.Version)
	}
	comp.sealVersion(target)
	for name, tmpl := range comp.Args {
		field := "compensation.args." + name
		if target.InputSchema != nil {
			if props := target.InputSchema.properties(); props != nil && !slices.Contains(props, name) {
				p.add(row, field, "%s takes no argument %q (it takes %s)", comp.Tool, name, strings.Join(props, ", "))
			}
		}
		// Undo arguments come from the receipt, which the provider vouches
		// for, never from the rest of its response.
		sc := afterCall(t)
		sc.payload = "compensation arguments are taken from the receipt, not the payload"
		sc.session = "compensation arguments render from the receipt and the compensated call's arguments, without the session"
		sc.absentAsEmpty = true
		v.templateRefs(row, field, t, tmpl, sc)
	}
	if target.InputSchema != nil {
		for _, name := range target.InputSchema.required() {
			if _, ok := comp.Args[name]; !ok && !p.already(row, "compensation.args."+name) {
				p.add(row, "compensation.args", "%s requires %q", comp.Tool, name)
			}
		}
	}
}

// wording checks what the agent may say. Only a real-sync success can be
// backed by a receipt, so that is the only wording allowed to claim an
// effect, and it must be rendered from the receipt.
func (v *validator) wording(row string, t *Tool) {
	p := v.p
	w := t.Wording
	gated := t.Route() == maestrotype.RouteGated
	realSync := t.Delivery == maestrotype.DeliveryRealSync
	v.requiredWording(row, t)
	switch {
	case gated && w.Pending == nil && !p.already(row, "wording.pending"):
		p.add(row, "wording.pending", "required: gated calls wait for an approver")
	case !gated && w.Pending != nil:
		p.add(row, "wording.pending", "only gated tools wait for an approver; this one never renders it")
	}
	if !realSync && PromisesDelivery(t.Description) {
		p.add(row, "description", "implies a delivery the tool does not perform during the call (delivery is %s)", t.Delivery)
	}
	for _, o := range []Outcome{OutcomeSuccess, OutcomePending, OutcomeFailure} {
		tmpl := w.For(o)
		if tmpl == nil {
			continue
		}
		field := "wording." + string(o)
		switch {
		case !PromisesDelivery(tmpl.String()):
		case o != OutcomeSuccess:
			p.add(row, field, "claims an effect, but no receipt exists on %s; say what is happening, not what happened", o)
		case t.Delivery == maestrotype.DeliveryRecordDeferred:
			p.addRule(RuleDeferredPastTense, row, field, "record-deferred wording must be future or neutral tense (\"I'll make sure the team gets it\"): delivery happens after the call")
		case !realSync:
			p.add(row, field, "claims an effect, but only real-sync tools have a receipt to back it (delivery is %s)", t.Delivery)
		}
		sc := afterCall(t)
		if o != OutcomeSuccess {
			sc = scope{
				receipt: fmt.Sprintf("there is no receipt on %s", o),
				payload: fmt.Sprintf("there is no payload on %s", o),
			}
		}
		v.templateRefs(row, field, t, tmpl, sc)
	}
	if realSync && w.Success != nil && !w.Success.References(rootReceipt) {
		p.add(row, "wording.success", "real-sync wording must be derived from the receipt: reference .Receipt")
	}
	v.partialWording(row, t)
	if n := w.SafetyNotice; n != nil {
		if PromisesDelivery(n.String()) {
			p.add(row, "safety_notice", "claims an effect, but it is spoken exactly when the tool cannot say it did everything")
		}
		v.templateRefs(row, "safety_notice", t, n, beforeCall)
	}
	if realSync && w.Success != nil && t.Connector.ReceiptProvesAcceptanceOnly() && ClaimsDelivery(w.Success.String()) {
		p.add(row, "wording.success", "claims delivery, but a %s receipt proves only that the provider accepted the message: say it was sent", t.Connector.Kind)
	}
}

// partialWording checks the wording for a composite tool some of whose
// parts went out: required for such a tool, refused for any other, and
// derived from the parts' receipts.
func (v *validator) partialWording(row string, t *Tool) {
	p := v.p
	w := t.Wording.Partial
	composite := len(t.Connector.Parts()) > 0 && t.Delivery == maestrotype.DeliveryRealSync
	switch {
	case w == nil && composite && !p.already(row, "wording.partial"):
		p.add(row, "wording.partial", "required: %s performs %s as separate effects, so some can go out without the others", t.Connector.Kind, strings.Join(t.Connector.Parts(), " and "))
	case w == nil:
	case !composite:
		p.add(row, "wording.partial", "only a real-sync tool whose connector has parts (page) can go out in part")
	case !w.References(rootParts):
		p.add(row, "wording.partial", "must name what went out from its receipt: reference .Parts")
	default:
		v.templateRefs(row, "wording.partial", t, w, scope{receipt: "only some parts went out: read each part's receipt from .Parts"})
	}
}

// requiredWording checks the wording every tool needs, whatever its class.
func (v *validator) requiredWording(row string, t *Tool) {
	p := v.p
	if t.Wording.Success == nil && !p.already(row, "wording.success") {
		p.add(row, "wording.success", "required")
	}
	if t.Wording.Failure == nil && !p.already(row, "wording.failure") {
		p.add(row, "wording.failure", "required")
	}
}

// scope says which call data a template may read: each string field holds
// why that root is unavailable, or is empty when it is available.
type scope struct {
	receipt string
	payload string
	// session is why .Session is unavailable; when it is available, tool
	// templates see only .Session.id (see SessionFact).
	session string
	// absentAsEmpty is set for templates rendered by RenderArgs, where an
	// absent argument reads as empty instead of failing the render.
	absentAsEmpty bool
}

// beforeCall is the scope of templates rendered before the provider runs.
var beforeCall = scope{
	receipt: "it renders before the call, so there is no receipt yet",
	payload: "it renders before the call, so there is no payload yet",
}

// afterCall is the scope of templates rendered after a successful call.
func afterCall(t *Tool) scope {
	if t.Delivery != maestrotype.DeliveryRealSync {
		return scope{receipt: fmt.Sprintf("only real-sync tools have a receipt (delivery is %s)", t.Delivery)}
	}
	return scope{}
}

// templateRefs checks every field a template reads against what will exist
// when it renders.
func (v *validator) templateRefs(row, field string, t *Tool, tmpl *Template, sc scope) {
	p := v.p
	var args []string
	if t.InputSchema != nil {
		args = t.InputSchema.properties()
	}
	for _, path := range tmpl.paths() {
		ref := "." + strings.Join(path, ".")
		switch path[0] {
		case rootArgs:
			switch {
			case len(path) < 2:
			case args != nil && !slices.Contains(args, path[1]):
				p.addRule(RuleTemplateReference, row, field, "reads %s, which input_schema does not declare (it declares %s)", ref, strings.Join(args, ", "))
			case sc.absentAsEmpty || t.InputSchema == nil:
			default:
				// missingkey=error makes an absent argument fail the render,
				// guard or not: {{if .Args.x}} fails just like {{.Args.x}}.
				if optional := t.InputSchema.optionalAlong(path[1:]); optional != "" {
					p.addRule(RuleTemplateMayBeAbsent, row, field, "reads %s, but input_schema does not require %s, so it can be absent when this renders: require it, or read it with {{with index .Args %q}}…{{end}}",
						ref, optional, path[1])
				}
			}
		case rootReceipt:
			switch {
			case sc.receipt != "":
				p.addRule(RuleTemplateReference, row, field, "reads %s, but %s", ref, sc.receipt)
			case len(path) > 1 && !slices.Contains(receiptProps, path[1]):
				p.addRule(RuleTemplateReference, row, field, "reads %s; a receipt has %s", ref, strings.Join(receiptProps, ", "))
			case len(path) > 2 && path[1] == "Fields" && !slices.Contains(t.ReceiptFields, path[2]):
				p.addRule(RuleTemplateReference, row, field, "reads %s, which receipt.fields does not declare", ref)
			}
		case rootPayload:
			if sc.payload != "" {
				p.addRule(RuleTemplateReference, row, field, "reads %s, but %s", ref, sc.payload)
			}
		case rootSession:
			switch {
			case sc.session != "":
				p.addRule(RuleTemplateReference, row, field, "reads %s, but %s", ref, sc.session)
			case len(path) > 1 && path[1] != SessionFactID:
				p.addRule(RuleTemplateReference, row, field, "reads %s, but tool templates see only .Session.%s: session facts are optional, so only post-call arguments read them", ref, SessionFactID)
			case len(path) > 2:
				p.addRule(RuleTemplateReference, row, field, "reads %s, but .Session.%s is a string", ref, SessionFactID)
			}
		case rootOperationKey:
			if len(path) > 1 {
				p.addRule(RuleTemplateReference, row, field, "reads %s, but .OperationKey is a string", ref)
			}
		case rootParts:
			parts := t.Connector.Parts()
			switch {
			case len(parts) == 0:
				p.addRule(RuleTemplateReference, row, field, "reads %s, but connector kind %q has no parts", ref, t.Connector.Kind)
			case field != "wording.success" && field != "wording.partial":
				p.addRule(RuleTemplateReference, row, field, "reads %s, but only success and partial wording render with the parts' receipts", ref)
			case len(path) > 1 && !slices.Contains(parts, path[1]):
				p.addRule(RuleTemplateReference, row, field, "reads %s; the parts of %s are %s", ref, t.Connector.Kind, strings.Join(parts, ", "))
			case len(path) > 2 && !slices.Contains(receiptProps, path[2]):
				p.addRule(RuleTemplateReference, row, field, "reads %s; a receipt has %s", ref, strings.Join(receiptProps, ", "))
			}
		default:
			p.addRule(RuleTemplateReference, row, field, "reads %s; templates see .Args, .Receipt, .Payload, .Session, .OperationKey and .Parts", ref)
		}
	}
}

// receiptProps are the fields of maestrotype.Receipt.
var receiptProps = []string{"ID", "Status", "Provider", "Fields", "IssuedAt"}

// agents checks the allowlists: deny by default only works if every name
// on a list is a real tool and every agent that can call one can be
// authenticated.
func (v *validator) agents() {
	p := v.p
	ids := make(map[string]bool)
	for i, a := range v.c.agents {
		row := rowName("agents", i, a.ID)
		switch {
		case a.ID == "":
			p.add(row, "id", "required")
		case ids[a.ID]:
			p.add(row, "id", "duplicate agent %q", a.ID)
		}
		ids[a.ID] = true
		// The post-call agent never authenticates: only the post-call
		// workflow acts as it (its own rules live with the postcall section).
		if len(a.allow) > 0 && !a.hasKey && !v.isPostCallAgent(a) && !p.already(row, "api_key_sha256") {
			p.add(row, "api_key_sha256", "required: the agent may call tools, so it must authenticate")
		}
		if !a.OnFailure.Valid() {
			p.add(row, "on_failure", "unknown value %q (want %s or %s)", a.OnFailure, maestrotype.OnFailureRollback, maestrotype.OnFailureNone)
		}
		if !a.OnReject.Valid() {
			p.add(row, "on_reject", "unknown value %q (want %s or %s)", a.OnReject, OnRejectHalt, OnRejectContinue)
		}
		if !a.WhileAwaitingApproval.Valid() {
			p.add(row, "while_awaiting_approval", "unknown value %q (want %s or %s)", a.WhileAwaitingApproval, AwaitingApprovalStrict, AwaitingApprovalAllowWrites)
		}
		capProblems(p, row, a)
		for _, name := range a.allow {
			if _, ok := v.c.tools[name]; !ok {
				p.add(row, "allow", "unknown tool %q", name)
			}
		}
	}
}

// descriptions requires every tool an agent may call to say when to call
// it. A tool no agent may call (a compensation run only by rollback) is
// never offered to a model, so its description is for people.
func (v *validator) descriptions(rows []toolRow) {
	for _, r := range rows {
		t := r.tool
		if !v.agentFacing(t.Name) || strings.TrimSpace(t.Description) == "" || PrescribesWhen(t.Description) {
			continue
		}
		v.p.add(r.row, "description", "must say when to call the tool: begin with one of %s and name the condition, got %q", whenOpeningList(), t.Description)
	}
}

func (v *validator) agentFacing(tool string) bool {
	return slices.ContainsFunc(v.c.agents, func(a *Agent) bool { return a.Allows(tool) })
}

func (v *validator) operators() {
	p := v.p
	ids := make(map[string]bool)
	for i, o := range v.c.operators {
		row := rowName("operators", i, o.ID)
		switch {
		case o.ID == "":
			p.add(row, "id", "required")
		case ids[o.ID]:
			p.add(row, "id", "duplicate operator %q", o.ID)
		}
		ids[o.ID] = true
		if !o.hasKey && !p.already(row, "api_key_sha256") {
			p.add(row, "api_key_sha256", "required: operators decide approvals, so they must authenticate")
		}
		if len(o.Roles) == 0 || slices.Contains(o.Roles, "") {
			p.add(row, "roles", "required: at least one non-empty role")
		}
	}
}

// uniqueKeys refuses one key for two principals: a key must identify
// exactly one agent or operator, or an agent key could open the ops API.
func (v *validator) uniqueKeys() {
	seen := make(map[keyHash]string)
	check := func(row string, h keyHash, has bool) {
		if !has {
			return
		}
		if prev, dup := seen[h]; dup {
			v.p.add(row, "api_key_sha256", "same key as %s", prev)
			return
		}
		seen[h] = row
	}
	for i, a := range v.c.agents {
		check(rowName("agents", i, a.ID), a.key, a.hasKey)
	}
	for i, o := range v.c.operators {
		check(rowName("operators", i, o.ID), o.key, o.hasKey)
	}
}
