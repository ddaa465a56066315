package bench

import (
	"encoding/json"
	"fmt"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/tools"
)

// callerNumber is the number the benchmark's calls come from; texting it
// is what the catalog's rule pre-approves.
const callerNumber = "+14155550100"

// sessionFacts are what the agent runtime states about every session: the
// caller's number from telephony and the tenant it belongs to.
var sessionFacts = map[string]string{"caller_number": callerNumber, "tenant_id": "t_100"}

// op is one kind of tool call, made the same way by every path.
type op struct {
	// name is the call's class: read, real-sync, compensable or approval.
	name string
	tool string
	args json.RawMessage
}

// ops are the calls every path makes, one per route maestro takes. For the
// direct and bare-Temporal paths, "approval" is the refund call alone: the
// floor an approved refund's effect could reach.
var ops = []op{
	{name: "read", tool: "lookup_tenant", args: json.RawMessage(`{"tenant_id":"t_100"}`)},
	{name: "real-sync", tool: "send_sms", args: json.RawMessage(`{"to":"` + callerNumber + `","body":"We have your report and will follow up today."}`)},
	{name: "compensable", tool: "create_work_order", args: json.RawMessage(`{"tenant_id":"t_100","category":"plumbing","description":"The kitchen tap drips.","priority":"routine"}`)},
	{name: "approval", tool: "issue_refund", args: json.RawMessage(`{"tenant_id":"t_100","amount_cents":1250,"reason":"Duplicate late fee"}`)},
}

// connectorCall renders the provider call maestro's Execute activity makes
// for this op: the catalog row's templates over the arguments, with the
// operation key as idempotency key. The direct and bare-Temporal paths send
// exactly this call.
func (o op) connectorCall(cat *tools.Catalog, key, session string) (connectors.Call, error) {
	tool, ok := cat.Tool(o.tool)
	if !ok {
		return connectors.Call{}, fmt.Errorf("tool %q is not in the catalog", o.tool)
	}
	args, err := tools.DecodeArgs(o.args)
	if err != nil {
		return connectors.Call{}, fmt.Errorf("error decoding %s arguments: %w", o.tool, err)
	}
	rc, err := tool.RenderCall(tools.TemplateData{Args: args, OperationKey: key, Session: map[string]any{"id": session}})
	if err != nil {
		return connectors.Call{}, fmt.Errorf("error rendering the %s call: %w", o.tool, err)
	}
	return connectors.Call{Kind: rc.Kind, IdempotencyKey: key, Settings: rc.Settings, Body: rc.Body}, nil
}
