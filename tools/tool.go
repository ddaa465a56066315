package tools

import (
	"github.com/maestro-run/maestro/approval/rule"

	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// A Tool is one catalog row: everything the router, the connectors, the
// approval gate and the agent-facing wording need to know about one tool.
//
// Tools handed out by a Catalog are shared and must not be modified. Tests
// and evals may build a Tool directly, bypassing the loader, to exercise
// code that must hold even for a row the loader would have refused.
type Tool struct {
	Name string
	// Version changes when the tool's contract changes; an undo entry
	// records the version of the compensation it will run.
	Version int
	// Description tells the agent when to call the tool.
	Description string
	// Owner is the team that owns the downstream system and assigns Effect.
	Owner         string
	Effect        maestrotype.Effect
	Delivery      maestrotype.Delivery
	Reversibility maestrotype.Reversibility
	// RiskTags are shown to approvers.
	RiskTags []string
	// Repeatable marks a tool whose identical arguments may legitimately
	// take effect more than once in a session (a second identical
	// reminder, say): only then does the agent's tool-call ID join the
	// derived operation key. Optional: default false, so a re-issued call
	// with the same arguments names the same effect.
	Repeatable bool
	// OnUnknown says whether a call whose outcome is unknown, on a
	// provider that cannot be searched, is held for a human (default) or
	// sent again. Optional: default hold.
	OnUnknown   OnUnknown
	InputSchema *Schema
	// MoneyFields are the integer arguments that are amounts of money,
	// each counted in its currency's minor unit, so approvers are shown
	// $125.00 where the agent sent 12500. Optional: default none, and
	// every argument is shown as it was sent.
	MoneyFields map[string]Currency
	Connector   Connector
	// ReceiptFields are the receipt fields that prove a real-sync call's
	// effect, e.g. message_sid for an SMS.
	ReceiptFields []string
	// Approval is the gate policy; nil for tools that are never gated.
	Approval *Approval
	// Compensation undoes a compensable tool's effect; nil otherwise.
	Compensation *Compensation
	// Before and After read the write's target just ahead of its effect
	// and once it succeeded; nil when the row declares none.
	Before, After *StateRead
	Wording       Wording
	// Canary is the tool's reality canary; nil when it has none.
	Canary *Canary
	// RequiresGreenCanary keeps the tool from agents while its canary's
	// last run failed. Optional: default false.
	RequiresGreenCanary bool
	// rowDigest is the digest of the row the loader read; empty for a Tool
	// built directly.
	rowDigest string
}

// OnTimeout is what an approval request becomes when nobody decides in
// time.
type OnTimeout string

const (
	// OnTimeoutTimedOut closes the request unexecuted (the default).
	OnTimeoutTimedOut OnTimeout = "timed_out"
	// OnTimeoutAutoApprove executes the call; money never allows it.
	OnTimeoutAutoApprove OnTimeout = "auto_approve"
)

// Approval is a gated tool's approval policy.
type Approval struct {
	// ApproverRole is the operator role that may decide. Empty only when
	// AutoApproveWhen is set, in which case a call the condition does not
	// approve has nobody to approve it.
	ApproverRole string
	// Timeout bounds the wait for a decision.
	Timeout   time.Duration
	OnTimeout OnTimeout
	// AutoApproveWhen is a CEL expression over args and session that
	// approves a call without a human, e.g.
	// "args.to == session.caller_number". It is evaluated by the approval
	// package and kept here unparsed; the decision is still logged.
	AutoApproveWhen string
	// Condition is AutoApproveWhen compiled at load; nil when unset.
	Condition *rule.Condition
	// Provenance lists the fact provenances the rule may rest on: facts
	// from any other source are hidden from it. Optional: default operator
	// and every platform-signed source, never agent-declared.
	Provenance []maestrotype.Provenance
	// NotifyFields names the arguments a notification to an approver
	// shows, in order (the amount, the recipient). Optional: default a
	// compact summary of every argument.
	NotifyFields []string
	// VouchRoles are roles, beside ApproverRole, whose holders' vouched
	// facts the rule may rest on. A vouch grants what an approval would,
	// so an operator's fact counts only from someone holding one of
	// these or the approver role. Optional: default none, so only the
	// approver role.
	VouchRoles []string
}

// TrustsFact reports whether the rule may rest on a fact of provenance p.
func (a *Approval) TrustsFact(p maestrotype.Provenance) bool {
	if a == nil {
		return false
	}
	if a.Provenance == nil {
		return maestrotype.DefaultTrustedProvenances(p)
	}
	return slices.Contains(a.Provenance, p.Kind())
}

// AutoApproveOnTimeout reports whether a request nobody decided in time is
// approved rather than closed. A nil policy never auto-approves.
func (a *Approval) AutoApproveOnTimeout() bool {
	return a != nil && a.OnTimeout == OnTimeoutAutoApprove
}

// Compensation names the tool that undoes a compensable tool's effect and
// the arguments to call it with. The arguments are rendered from the
// original call, receipt included, and snapshotted onto the undo stack.
type Compensation struct {
	Tool string
	// Version is the compensation tool's declared version; VersionString
	// adds a digest of the content (see there).
	Version int
	Args    map[string]*Template
	// blockDigest covers this compensation block and digest covers it with
	// the compensation tool's row; the loader sets both.
	blockDigest string
	digest      string
}

// RenderArgs renders the compensation's arguments as a JSON object.
func (c *Compensation) RenderArgs(data TemplateData) (json.RawMessage, error) {
	args := make(map[string]string, len(c.Args))
	for name, t := range c.Args {
		v, err := t.Execute(data)
		if err != nil {
			return nil, fmt.Errorf("error rendering compensation argument %s: %w", name, err)
		}
		args[name] = v
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("error encoding compensation arguments: %w", err)
	}
	return raw, nil
}

// ValidateArgs checks a call's arguments against the tool's input schema.
// Arguments that do not conform, including malformed JSON, yield an
// *ArgsError the agent can act on.
func (t *Tool) ValidateArgs(raw json.RawMessage) error {
	if t.InputSchema == nil {
		// Deny by default: a tool without a schema accepts nothing.
		return fmt.Errorf("error validating arguments: tool %q has no input schema", t.Name)
	}
	return t.InputSchema.validate(t.Name, raw)
}
