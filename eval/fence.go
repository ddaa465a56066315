// Package eval holds the evals maestro ships with itself. The structural
// fence runs on every build: it reads tool definitions, not traffic, and
// fails when a tool could let an agent claim an effect nobody can prove.
package eval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Rule names one fence rule.
type Rule string

const (
	// RuleUnclassified: the tool lacks an effect, delivery or
	// reversibility, so nothing knows how to route it.
	RuleUnclassified Rule = "unclassified"
	// RulePromiseWithoutDelivery: the wording or description can promise
	// a delivery, notification or transfer, but the tool performs nothing
	// during the call that a receipt could prove.
	RulePromiseWithoutDelivery Rule = "promise-without-delivery"
	// RuleDeferredPastTense: record-deferred wording claims as done what
	// the post-call workflow has not yet delivered.
	RuleDeferredPastTense Rule = "deferred-past-tense"
	// RulePromiseBeforeReceipt: pending or failure wording claims an
	// effect, though no receipt exists when it is spoken.
	RulePromiseBeforeReceipt Rule = "promise-before-receipt"
	// RuleNoVerifiableEffect: a real-sync tool whose connector performs
	// nothing a provider can confirm, such as a stub returning a fixed
	// success or an HTTP GET posing as a write.
	RuleNoVerifiableEffect Rule = "no-verifiable-effect"
	// RuleReceipt: a real-sync tool's receipt does not name, or its
	// connector does not produce, the fields that prove the effect.
	RuleReceipt Rule = "receipt"
	// RuleWordingIgnoresReceipt: real-sync success wording is fixed text
	// rather than derived from the receipt.
	RuleWordingIgnoresReceipt Rule = "wording-ignores-receipt"
	// RuleDeliveryBeforeFinalStatus: success wording says a message was
	// delivered, but the tool's receipt proves only that the provider
	// accepted it (Twilio queued, SES accepted); delivery is known only
	// from a later, final status.
	RuleDeliveryBeforeFinalStatus Rule = "delivery-before-final-status"
	// RuleDeferredUndelivered: a record-deferred tool has no post-call
	// delivery, so what it records reaches nobody while the agent has told
	// the human the team will get it.
	RuleDeferredUndelivered Rule = "deferred-undelivered"
	// RuleDeferredWithoutFallback: a record-deferred tool's delivery has
	// no deadline or no fallback channel, so one provider's outage or
	// refusal would break the promise the agent spoke, and nobody would
	// hear of it in time.
	RuleDeferredWithoutFallback Rule = "deferred-without-fallback"
	// RulePostCallWithoutReceipt: post-call work is dispatched to a tool
	// that cannot prove it happened: missing, not real-sync, performing
	// nothing a provider can confirm, or declaring no receipt fields.
	RulePostCallWithoutReceipt Rule = "post-call-without-receipt"
	// RuleDescriptionNotPrescriptive: a tool an agent may call has a
	// description that does not open by saying when to call it, so the
	// model chooses it by guesswork (see tools.PrescribesWhen).
	RuleDescriptionNotPrescriptive Rule = "description-not-prescriptive"
	// RuleEmergencyWithoutNotice: a tool that can be called for an
	// emergency (an argument offers "emergency", or its risk tags say so)
	// has no safety_notice, so a caller whose emergency the tool could not
	// fully handle may never hear what to do instead.
	RuleEmergencyWithoutNotice Rule = "emergency-without-notice"
)

// Violation is one way one tool breaks the fence.
type Violation struct {
	// Tool is the tool at fault: for post-call rules, the record-deferred
	// tool left undelivered or the tool post-call work is dispatched to.
	Tool   string
	Rule   Rule
	Detail string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s: %s", v.Tool, v.Rule, v.Detail)
}

// Fence checks every tool against the invariant that an agent never tells
// a human something happened unless a real effect happened and a receipt
// proves it. It trusts nothing the loader checked, so it also holds for
// tools built in code; an empty result means the tools pass.
func Fence(ts []*tools.Tool) []Violation {
	var out []Violation
	for _, t := range ts {
		out = append(out, fence(t)...)
	}
	return out
}

// findings collects one tool's violations.
type findings struct {
	tool string
	list []Violation
}

func (f *findings) add(r Rule, format string, args ...any) {
	f.list = append(f.list, Violation{Tool: f.tool, Rule: r, Detail: fmt.Sprintf(format, args...)})
}

func fence(t *tools.Tool) []Violation {
	f := &findings{tool: t.Name}
	if missing := unclassified(t); len(missing) > 0 {
		f.add(RuleUnclassified, "no valid %s", strings.Join(missing, ", "))
	}
	checkPromises(f, t)
	if t.EmergencyCapable() && t.Wording.SafetyNotice == nil {
		f.add(RuleEmergencyWithoutNotice, "can be called for an emergency but has no safety_notice to speak when it cannot say it did everything")
	}
	if t.Delivery == maestrotype.DeliveryRealSync {
		checkRealSync(f, t)
	}
	return f.list
}

func unclassified(t *tools.Tool) []string {
	var missing []string
	if !t.Effect.Valid() {
		missing = append(missing, "effect")
	}
	if !t.Delivery.Valid() {
		missing = append(missing, "delivery")
	}
	if !t.Reversibility.Valid() {
		missing = append(missing, "reversibility")
	}
	return missing
}

// checkPromises finds claims of an effect where no receipt can back them:
// in any tool that is not real-sync, and in any wording spoken before the
// receipt exists.
func checkPromises(f *findings, t *tools.Tool) {
	realSync := t.Delivery == maestrotype.DeliveryRealSync
	for _, o := range []tools.Outcome{tools.OutcomeSuccess, tools.OutcomePending, tools.OutcomeFailure} {
		w := t.Wording.For(o)
		if w == nil || !tools.PromisesDelivery(w.String()) {
			continue
		}
		switch {
		case o != tools.OutcomeSuccess:
			f.add(RulePromiseBeforeReceipt, "%s wording %q claims an effect before any receipt exists", o, w)
		case t.Delivery == maestrotype.DeliveryRecordDeferred:
			f.add(RuleDeferredPastTense, "record-deferred wording %q claims as done what is delivered after the call", w)
		case !realSync:
			f.add(RulePromiseWithoutDelivery, "wording %q promises a delivery, but the tool is %q, not real-sync", w, t.Delivery)
		}
	}
	if !realSync && tools.PromisesDelivery(t.Description) {
		f.add(RulePromiseWithoutDelivery, "description %q implies a delivery, but the tool is %q, not real-sync", t.Description, t.Delivery)
	}
}

// checkRealSync checks that a real-sync tool's claims rest on a receipt its
// connector really produces.
func checkRealSync(f *findings, t *tools.Tool) {
	c := t.Connector
	if !c.PerformsEffect() {
		what := fmt.Sprintf("connector kind %q", c.Kind)
		if c.Kind == maestrotype.KindHTTP {
			what = fmt.Sprintf("an http %s", c.Method())
		}
		f.add(RuleNoVerifiableEffect, "%s performs nothing a provider can confirm", what)
	} else {
		produced := c.ReceiptFields()
		if len(t.ReceiptFields) == 0 {
			f.add(RuleReceipt, "declares no receipt fields; %s produces %s", c.Kind, strings.Join(produced, ", "))
		}
		for _, name := range t.ReceiptFields {
			if !slices.Contains(produced, name) {
				f.add(RuleReceipt, "receipt field %q is not produced by %s", name, c.Kind)
			}
		}
		for _, name := range c.ProofFields() {
			if len(t.ReceiptFields) > 0 && !slices.Contains(t.ReceiptFields, name) {
				f.add(RuleReceipt, "receipt omits %q, which identifies the effect at the provider", name)
			}
		}
	}
	if w := t.Wording.Success; w != nil && c.ReceiptProvesAcceptanceOnly() && tools.ClaimsDelivery(w.String()) {
		f.add(RuleDeliveryBeforeFinalStatus, "success wording %q claims delivery, but a %s receipt proves only that the provider accepted the message", w, c.Kind)
	}
	switch w := t.Wording.Success; {
	case w == nil:
		f.add(RuleWordingIgnoresReceipt, "no success wording to derive from the receipt")
	case !w.References("Receipt"):
		f.add(RuleWordingIgnoresReceipt, "success wording %q is fixed text, not derived from .Receipt", w)
	}
}
