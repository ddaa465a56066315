package tools

import (
	"encoding/json"

	"github.com/maestro-run/maestro/maestrotype"
)

// Canary is a tool's reality canary: the arguments a scheduled run sends
// through the tool's real connector to the provider's own test facilities
// (Twilio's magic numbers, the SES mailbox simulator, a service's
// sandbox), whose effect is then read back from the provider.
type Canary struct {
	// Args are the tool's arguments for the canary call; they satisfy the
	// tool's input_schema.
	Args json.RawMessage
	// Read is the path an http tool's effect is read back from, on the
	// same service, rendered from .Args and .Receipt; nil for other kinds,
	// whose providers are read by message ID.
	Read *Template
}

type canaryFile struct {
	Args map[string]any `yaml:"args"`
	Read string         `yaml:"read"`
}

// buildCanary parses a row's canary block.
func buildCanary(p *problems, row, tool string, cf *canaryFile) *Canary {
	if cf == nil {
		return nil
	}
	read := parseField(p, row, tool, "canary.read", cf.Read)
	args := cf.Args
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		p.add(row, "canary.args", "not representable as JSON: %v", err)
		return &Canary{Args: json.RawMessage("{}"), Read: read}
	}
	return &Canary{Args: raw, Read: read}
}

// canary checks a tool's canary: only a real-sync tool performs an
// effect a provider can confirm, money is never fired at a schedule's
// whim, and the arguments must be ones the tool accepts.
func (v *validator) canary(row string, t *Tool) {
	p := v.p
	if t.RequiresGreenCanary && t.Canary == nil {
		p.add(row, "requires_green_canary", "the tool has no canary to be green: add canary: {args: {...}}")
	}
	c := t.Canary
	if c == nil {
		return
	}
	switch {
	case t.Delivery != maestrotype.DeliveryRealSync:
		p.add(row, "canary", "only real-sync tools have an effect the provider can confirm; this one is %s", t.Delivery)
		return
	case t.Effect == maestrotype.EffectMoney:
		p.add(row, "canary", "money tools are never fired by a canary: money moves only behind a human")
		return
	case !t.Connector.PerformsEffect():
		return // reported by the connector rule
	}
	switch {
	case t.Connector.Kind == maestrotype.KindHTTP && c.Read == nil && !p.already(row, "canary.read"):
		p.add(row, "canary.read", "required for an http tool: the path its effect is read back from, e.g. /v1/tickets/{{.Receipt.ID}}")
	case t.Connector.Kind != maestrotype.KindHTTP && c.Read != nil:
		p.add(row, "canary.read", "only http tools are read back by path; %s is read back by its message ID", t.Connector.Kind)
	case c.Read != nil:
		sc := afterCall(t)
		sc.payload = "the canary reads the effect back from the provider, not from the call's payload"
		sc.session = "a canary call has no session"
		v.templateRefs(row, "canary.read", t, c.Read, sc)
	}
	if t.InputSchema == nil || p.already(row, "canary.args") {
		return
	}
	if err := t.InputSchema.validate(t.Name, c.Args); err != nil {
		p.add(row, "canary.args", "the tool would refuse them: %v", err)
	}
}
