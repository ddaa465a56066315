package grader

import (
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/standin/fault"
)

// Provider is the stand-in a target's call reaches first, where its
// faults are injected.
type Provider string

const (
	Twilio  Provider = "twilio"
	SES     Provider = "ses"
	Sandbox Provider = "sandbox"
)

func (p Provider) faults(set *standin.Set) *fault.Injector {
	switch p {
	case Twilio:
		return set.Twilio.Faults()
	case SES:
		return set.SES.Faults()
	default:
		return set.Sandbox.Faults()
	}
}

// Target is one connector kind, exercised through a demo catalog tool that
// the voice agent may call without waiting for a human: either no gate, or
// a catalog rule that approves these arguments in this session.
type Target struct {
	// Connector labels the row: the connector kind, and for HTTP the route,
	// since a read and a write recover differently.
	Connector string
	Tool      string
	// Providers are where faults go: every provider the call reaches, so
	// that nothing goes out and the call answers as a single effect would
	// (ADR 14).
	Providers []Provider
	// OnePart marks a composite tool with one part faulted alone: the
	// other parts go out, and the agent must hear truthfully that they
	// did (partly_delivered, with each delivered part's receipt).
	OnePart bool
	// Args pass the tool's schema; BadArgs do not.
	Args, BadArgs string
}

// agent is the demo voice agent, whose allowlist holds every target tool.
const agent = "voice-agent"

// sessionFacts are what the agent runtime states about the call; the demo
// catalog's rules approve a text to the caller's number and an email about
// the caller's own tenancy.
var sessionFacts = map[string]string{"caller_number": "+14155550100", "tenant_id": "t_100"}

// Targets covers every connector kind of the demo catalog.
var Targets = []Target{
	{
		Connector: "twilio_sms", Tool: "send_sms", Providers: []Provider{Twilio},
		Args:    `{"to":"+14155550100","body":"Your repair visit is confirmed for 9am."}`,
		BadArgs: `{"to":"555-0100","body":"Your repair visit is confirmed for 9am."}`,
	},
	{
		Connector: "ses_email", Tool: "email_property_manager", Providers: []Provider{SES},
		Args:    `{"tenant_id":"t_100","summary":"The kitchen tap in 4B has been dripping for two days."}`,
		BadArgs: `{"tenant_id":"t_100"}`,
	},
	{
		Connector: "page", Tool: "escalate_to_human", Providers: []Provider{Twilio, SES},
		Args:    `{"reason":"Water is coming through the kitchen ceiling.","urgency":"emergency","callback_number":"+14155550100"}`,
		BadArgs: `{"reason":"Water is coming through the kitchen ceiling.","urgency":"whenever","callback_number":"+14155550100"}`,
	},
	{
		// The text fails and the email goes out.
		Connector: "page (text only)", Tool: "escalate_to_human", Providers: []Provider{Twilio}, OnePart: true,
		Args:    `{"reason":"Water is coming through the kitchen ceiling.","urgency":"emergency","callback_number":"+14155550100"}`,
		BadArgs: `{"reason":"Water is coming through the kitchen ceiling.","urgency":"whenever","callback_number":"+14155550100"}`,
	},
	{
		Connector: "http (write)", Tool: "create_work_order", Providers: []Provider{Sandbox},
		Args:    `{"tenant_id":"t_100","category":"plumbing","description":"Water through the kitchen ceiling","priority":"urgent"}`,
		BadArgs: `{"tenant_id":"t_100","category":"roofing","description":"Water through the kitchen ceiling","priority":"urgent"}`,
	},
	{
		Connector: "http (read)", Tool: "lookup_tenant", Providers: []Provider{Sandbox},
		Args:    `{"tenant_id":"t_100"}`,
		BadArgs: `{"tenant_id":"100"}`,
	},
}
