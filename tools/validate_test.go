package tools_test

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// minimalCatalog is the smallest catalog with one tool per route. Each
// refusal case below breaks exactly one rule of it.
const minimalCatalog = `
version: 1
session_facts:
  - name: caller_number
  - name: tenant_id
agents:
  - id: agent
    # sha256 of "validate-test-agent-key"
    api_key_sha256: 5197ddc500dfd33e2b7703f5b45b17101eb81665fcd50acdb5499ae80b86fd92
    allow: [lookup, notify, book, refund, note]
  - id: after-call
    allow: [notify]
operators:
  - id: boss
    # sha256 of "validate-test-operator-key"
    api_key_sha256: 8a279defb542ff98d6af129d1b16c07329e1502872c5ba4e35f70f0c63da0828
    roles: [manager]
tools:
  - name: lookup
    description: Call when you need a tenant.
    owner: team
    effect: read
    delivery: readonly
    reversibility: none
    input_schema: {type: object, required: [id], additionalProperties: false, properties: {id: {type: string}}}
    connector: {kind: http, service: api, method: GET, path: "/tenants/{{pathescape .Args.id}}"}
    wording: {success: "Here is the tenant.", failure: "I couldn't find the tenant."}
  - name: notify
    description: Call when someone must get a text.
    owner: team
    effect: write
    delivery: real-sync
    reversibility: irreversible
    input_schema: {type: object, required: [to, body], properties: {to: {type: string}, body: {type: string}}}
    connector: {kind: twilio_sms, to: "{{.Args.to}}", body: "{{.Args.body}}"}
    receipt: {fields: [message_sid, status]}
    approval: {approver_role: manager, timeout: 10m, auto_approve_when: "args.to == session.caller_number"}
    wording:
      success: "I've sent it; Twilio reports it {{.Receipt.Status}}."
      pending: "I've asked a manager to approve it."
      failure: "I couldn't send it."
  - name: book
    description: Call when the tenant wants a visit booked.
    owner: team
    effect: write
    delivery: real-sync
    reversibility: compensable
    input_schema: {type: object, properties: {when: {type: string}}}
    connector: {kind: http, service: api, method: POST, path: /bookings}
    receipt: {fields: [resource_id]}
    compensation: {tool: unbook, args: {booking_id: "{{.Receipt.ID}}"}}
    wording: {success: "Booking {{.Receipt.ID}} is made.", failure: "I couldn't book it."}
  - name: unbook
    description: Undoes book.
    owner: team
    effect: write
    delivery: real-sync
    reversibility: irreversible
    input_schema: {type: object, required: [booking_id], properties: {booking_id: {type: string}}}
    connector: {kind: http, service: api, method: POST, path: "/bookings/{{pathescape .Args.booking_id}}/cancel"}
    receipt: {fields: [resource_id, status]}
    approval: {approver_role: manager, timeout: 1h}
    wording: {success: "Booking {{.Receipt.ID}} is cancelled.", pending: "Waiting for a manager.", failure: "I couldn't cancel it."}
  - name: refund
    description: Call only when a tenant is owed money.
    owner: billing
    effect: money
    delivery: real-sync
    reversibility: irreversible
    input_schema: {type: object, required: [cents], properties: {cents: {type: integer}}}
    connector: {kind: http, service: api, method: POST, path: /refunds}
    receipt: {fields: [resource_id, status]}
    approval: {approver_role: manager, timeout: 30m, on_timeout: timed_out}
    wording: {success: "Refund {{.Receipt.ID}} is {{.Receipt.Status}}.", pending: "A manager will review it.", failure: "I couldn't refund it."}
  - name: note
    description: Call when the tenant wants to leave a message for the team.
    owner: team
    effect: write
    delivery: record-deferred
    reversibility: irreversible
    input_schema: {type: object, properties: {text: {type: string}}}
    connector: {kind: deferred}
    wording: {success: "I'll make sure the team gets it.", failure: "I couldn't take the message."}
postcall:
  agent: after-call
  deliveries:
    - from: note
      tool: notify
      args: {to: "+15550000000", body: "{{.Args.text}}"}
  rules:
    - name: callback
      speaker: caller
      any: [call me back]
      tool: notify
      args: {to: "{{.Session.caller_number}}", body: "{{.Args.text}}"}
`

func TestMinimalCatalogLoads(t *testing.T) {
	t.Parallel()
	c, err := tools.Load([]byte(minimalCatalog))
	require.NoError(t, err)
	require.Len(t, c.Tools(), 6)
}

// catalogDoc is the minimal catalog as plain maps, for mutating.
type catalogDoc map[string]any

func minimalDoc(t *testing.T) catalogDoc {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(minimalCatalog), &m))
	return m
}

func (d catalogDoc) tool(name string) map[string]any {
	for _, t := range d["tools"].([]any) {
		if m := t.(map[string]any); m["name"] == name {
			return m
		}
	}
	panic("no tool " + name)
}

func (d catalogDoc) sub(tool, key string) map[string]any {
	return d.tool(tool)[key].(map[string]any)
}

func (d catalogDoc) agent() map[string]any {
	return d["agents"].([]any)[0].(map[string]any)
}

func (d catalogDoc) postCallAgent() map[string]any {
	return d["agents"].([]any)[1].(map[string]any)
}

func (d catalogDoc) postCall() map[string]any {
	return d["postcall"].(map[string]any)
}

func (d catalogDoc) delivery() map[string]any {
	return d.postCall()["deliveries"].([]any)[0].(map[string]any)
}

func (d catalogDoc) rule() map[string]any {
	return d.postCall()["rules"].([]any)[0].(map[string]any)
}

// appendCopy appends a copy of list[0] under key of m.
func appendCopy(m map[string]any, key string) {
	list := m[key].([]any)
	m[key] = append(list, maps.Clone(list[0].(map[string]any)))
}

func TestLoadRefusesNamingRowAndField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(d catalogDoc)
		row    string
		field  string
	}{
		{"format version", func(d catalogDoc) { d["version"] = 2 }, "catalog", "version"},
		{"missing effect", func(d catalogDoc) { delete(d.tool("lookup"), "effect") }, `tools[0] "lookup"`, "effect"},
		{"unknown effect", func(d catalogDoc) { d.tool("lookup")["effect"] = "delete" }, `tools[0] "lookup"`, "effect"},
		{"missing delivery", func(d catalogDoc) { delete(d.tool("notify"), "delivery") }, `tools[1] "notify"`, "delivery"},
		{"unknown reversibility", func(d catalogDoc) { d.tool("notify")["reversibility"] = "undoable" }, `tools[1] "notify"`, "reversibility"},
		{"read not readonly", func(d catalogDoc) { d.tool("lookup")["delivery"] = "real-sync" }, `tools[0] "lookup"`, "delivery"},
		{"read not reversibility none", func(d catalogDoc) { d.tool("lookup")["reversibility"] = "irreversible" }, `tools[0] "lookup"`, "reversibility"},
		{"write readonly", func(d catalogDoc) { d.tool("note")["delivery"] = "readonly" }, `tools[5] "note"`, "delivery"},
		{"write reversibility none", func(d catalogDoc) { d.tool("note")["reversibility"] = "none" }, `tools[5] "note"`, "reversibility"},
		{"money record-deferred", func(d catalogDoc) {
			refund := d.tool("refund")
			refund["delivery"] = "record-deferred"
			refund["connector"] = map[string]any{"kind": "deferred"}
			delete(refund, "receipt")
		}, `tools[4] "refund"`, "delivery"},
		{"unknown on_unknown", func(d catalogDoc) { d.tool("notify")["on_unknown"] = "retry" }, `tools[1] "notify"`, "on_unknown"},
		{"money resends on unknown", func(d catalogDoc) { d.tool("refund")["on_unknown"] = "resend" }, `tools[4] "refund"`, "on_unknown"},
		{"compensable resends on unknown", func(d catalogDoc) { d.tool("book")["on_unknown"] = "resend" }, `tools[2] "book"`, "on_unknown"},
		{"compensable without compensation", func(d catalogDoc) { delete(d.tool("book"), "compensation") }, `tools[2] "book"`, "compensation.tool"},
		{"unknown compensation tool", func(d catalogDoc) { d.sub("book", "compensation")["tool"] = "rebook" }, `tools[2] "book"`, "compensation.tool"},
		{"compensation is itself compensable", func(d catalogDoc) {
			d.tool("unbook")["reversibility"] = "compensable"
			d.tool("unbook")["compensation"] = map[string]any{"tool": "book"}
			delete(d.tool("unbook"), "approval")
			d.sub("unbook", "wording")["pending"] = ""
		}, `tools[2] "book"`, "compensation.tool"},
		{"compensation misses a required argument", func(d catalogDoc) {
			d.sub("book", "compensation")["args"] = map[string]any{}
		}, `tools[2] "book"`, "compensation.args"},
		{"compensation version mismatch", func(d catalogDoc) { d.sub("book", "compensation")["version"] = 2 }, `tools[2] "book"`, "compensation.version"},
		{"compensation on irreversible tool", func(d catalogDoc) {
			d.tool("notify")["compensation"] = map[string]any{"tool": "unbook"}
		}, `tools[1] "notify"`, "compensation"},
		{"money without approver role", func(d catalogDoc) { delete(d.sub("refund", "approval"), "approver_role") }, `tools[4] "refund"`, "approval.approver_role"},
		{"money without approval", func(d catalogDoc) { delete(d.tool("refund"), "approval") }, `tools[4] "refund"`, "approval.approver_role"},
		{"money auto-approves on timeout", func(d catalogDoc) { d.sub("refund", "approval")["on_timeout"] = "auto_approve" }, `tools[4] "refund"`, "approval.on_timeout"},
		{"money with auto-approve condition", func(d catalogDoc) {
			d.sub("refund", "approval")["auto_approve_when"] = "args.cents < 100"
		}, `tools[4] "refund"`, "approval.auto_approve_when"},
		{"unknown fact provenance", func(d catalogDoc) {
			d.sub("notify", "approval")["auto_approve_provenance"] = []any{"operator", "caller-said-so"}
		}, `tools[1] "notify"`, "approval.auto_approve_provenance[1]"},
		{"platform without a name", func(d catalogDoc) {
			d.sub("notify", "approval")["auto_approve_provenance"] = []any{"platform-signed:"}
		}, `tools[1] "notify"`, "approval.auto_approve_provenance[0]"},
		{"empty fact provenance list", func(d catalogDoc) {
			d.sub("notify", "approval")["auto_approve_provenance"] = []any{}
		}, `tools[1] "notify"`, "approval.auto_approve_provenance"},
		{"fact provenance without a rule", func(d catalogDoc) {
			d.sub("refund", "approval")["auto_approve_provenance"] = []any{"operator"}
		}, `tools[4] "refund"`, "approval.auto_approve_provenance"},
		{"fact provenance naming one operator", func(d catalogDoc) {
			d.sub("notify", "approval")["auto_approve_provenance"] = []any{"operator:boss"}
		}, `tools[1] "notify"`, "approval.auto_approve_provenance[0]"},
		{"vouch roles without a rule", func(d catalogDoc) {
			d.sub("refund", "approval")["vouch_roles"] = []any{"manager"}
		}, `tools[4] "refund"`, "approval.vouch_roles"},
		{"empty vouch roles", func(d catalogDoc) {
			d.sub("notify", "approval")["vouch_roles"] = []any{}
		}, `tools[1] "notify"`, "approval.vouch_roles"},
		{"vouch role nobody holds", func(d catalogDoc) {
			d.sub("notify", "approval")["vouch_roles"] = []any{"manager", "clerk"}
		}, `tools[1] "notify"`, "approval.vouch_roles[1]"},
		{"unknown permission", func(d catalogDoc) {
			d["permissions"] = map[string]any{"reload_catalog": []any{"manager"}, "drop_ledger": []any{"manager"}}
		}, "permissions", "drop_ledger"},
		{"permission granted to nobody", func(d catalogDoc) {
			d["permissions"] = map[string]any{"decode_payloads": []any{}}
		}, "permissions", "decode_payloads"},
		{"permission for a role nobody holds", func(d catalogDoc) {
			d["permissions"] = map[string]any{"run_canary": []any{"manager", "sre"}}
		}, "permissions", "run_canary[1]"},
		{"gated write without approver or condition", func(d catalogDoc) { delete(d.tool("notify"), "approval") }, `tools[1] "notify"`, "approval"},
		{"gated write with empty approval", func(d catalogDoc) {
			d.tool("notify")["approval"] = map[string]any{"timeout": "10m"}
		}, `tools[1] "notify"`, "approval"},
		{"approval on an ungated tool", func(d catalogDoc) {
			d.tool("book")["approval"] = map[string]any{"approver_role": "manager", "timeout": "5m"}
		}, `tools[2] "book"`, "approval"},
		{"approver role nobody holds", func(d catalogDoc) { d.sub("refund", "approval")["approver_role"] = "cfo" }, `tools[4] "refund"`, "approval.approver_role"},
		{"approval without timeout", func(d catalogDoc) { delete(d.sub("refund", "approval"), "timeout") }, `tools[4] "refund"`, "approval.timeout"},
		{"approval timeout not a duration", func(d catalogDoc) { d.sub("refund", "approval")["timeout"] = "soon" }, `tools[4] "refund"`, "approval.timeout"},
		{"unknown on_timeout", func(d catalogDoc) { d.sub("refund", "approval")["on_timeout"] = "retry" }, `tools[4] "refund"`, "approval.on_timeout"},
		{"invalid JSON schema", func(d catalogDoc) {
			d.tool("lookup")["input_schema"] = map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "strin"}}}
		}, `tools[0] "lookup"`, "input_schema"},
		{"schema not an object", func(d catalogDoc) {
			d.tool("lookup")["input_schema"] = map[string]any{"type": "string"}
		}, `tools[0] "lookup"`, "input_schema"},
		{"missing schema", func(d catalogDoc) { delete(d.tool("lookup"), "input_schema") }, `tools[0] "lookup"`, "input_schema"},
		{"missing connector", func(d catalogDoc) { delete(d.tool("notify"), "connector") }, `tools[1] "notify"`, "connector"},
		{"unknown connector kind", func(d catalogDoc) { d.sub("notify", "connector")["kind"] = "noop" }, `tools[1] "notify"`, "connector.kind"},
		{"missing connector setting", func(d catalogDoc) { delete(d.sub("notify", "connector"), "body") }, `tools[1] "notify"`, "connector.body"},
		{"unknown connector setting", func(d catalogDoc) { d.sub("notify", "connector")["from"] = "+1555" }, `tools[1] "notify"`, "connector.from"},
		{"templated http method", func(d catalogDoc) { d.sub("book", "connector")["method"] = "{{.Args.when}}" }, `tools[2] "book"`, "connector.method"},
		{"unknown http method", func(d catalogDoc) { d.sub("book", "connector")["method"] = "FETCH" }, `tools[2] "book"`, "connector.method"},
		{"template does not parse", func(d catalogDoc) { d.sub("notify", "connector")["to"] = "{{.Args.to" }, `tools[1] "notify"`, "connector.to"},
		{"template reads an undeclared argument", func(d catalogDoc) { d.sub("notify", "connector")["to"] = "{{.Args.phone}}" }, `tools[1] "notify"`, "connector.to"},
		{"template reads an unknown root", func(d catalogDoc) { d.sub("notify", "connector")["to"] = "{{.Arg.to}}" }, `tools[1] "notify"`, "connector.to"},
		{"connector reads the receipt", func(d catalogDoc) { d.sub("notify", "connector")["body"] = "{{.Receipt.ID}}" }, `tools[1] "notify"`, "connector.body"},
		{"real-sync http GET", func(d catalogDoc) { d.sub("book", "connector")["method"] = "GET" }, `tools[2] "book"`, "connector"},
		{"read that writes", func(d catalogDoc) { d.sub("lookup", "connector")["method"] = "DELETE" }, `tools[0] "lookup"`, "connector"},
		{"record-deferred with a real connector", func(d catalogDoc) {
			d.tool("note")["connector"] = map[string]any{"kind": "twilio_sms", "to": "+15550000000", "body": "{{.Args.text}}"}
		}, `tools[5] "note"`, "connector.kind"},
		{"deferred connector on real-sync", func(d catalogDoc) {
			d.tool("notify")["connector"] = map[string]any{"kind": "deferred"}
		}, `tools[1] "notify"`, "connector"},
		{"real-sync without receipt", func(d catalogDoc) { delete(d.tool("notify"), "receipt") }, `tools[1] "notify"`, "receipt.fields"},
		{"receipt field the connector cannot produce", func(d catalogDoc) {
			d.sub("notify", "receipt")["fields"] = []any{"message_sid", "message_id"}
		}, `tools[1] "notify"`, "receipt.fields[1]"},
		{"receipt without the proof field", func(d catalogDoc) { d.sub("notify", "receipt")["fields"] = []any{"status"} }, `tools[1] "notify"`, "receipt.fields"},
		{"receipt on a read", func(d catalogDoc) { d.tool("lookup")["receipt"] = map[string]any{"fields": []any{"status"}} }, `tools[0] "lookup"`, "receipt"},
		{"read wording promises delivery", func(d catalogDoc) { d.sub("lookup", "wording")["success"] = "I've sent the tenant a text." }, `tools[0] "lookup"`, "wording.success"},
		{"deferred wording in past tense", func(d catalogDoc) {
			d.sub("note", "wording")["success"] = "Your message has been delivered to the team."
		}, `tools[5] "note"`, "wording.success"},
		{"deferred description promises delivery", func(d catalogDoc) {
			d.tool("note")["description"] = "Call when the tenant wants to leave a message; it notifies the team."
		}, `tools[5] "note"`, "description"},
		{"agent-facing description says what, not when", func(d catalogDoc) {
			d.tool("lookup")["description"] = "Looks up a tenant."
		}, `tools[0] "lookup"`, "description"},
		{"agent-facing description opens with a condition and stops", func(d catalogDoc) {
			d.tool("notify")["description"] = "Call when "
		}, `tools[1] "notify"`, "description"},
		{"failure wording promises delivery", func(d catalogDoc) {
			d.sub("notify", "wording")["failure"] = "Twilio hiccuped but the text was delivered."
		}, `tools[1] "notify"`, "wording.failure"},
		{"real-sync success wording ignores the receipt", func(d catalogDoc) { d.sub("notify", "wording")["success"] = "Done, I've sent it." }, `tools[1] "notify"`, "wording.success"},
		{"sms success wording claims delivery", func(d catalogDoc) {
			d.sub("notify", "wording")["success"] = "Your text {{.Receipt.ID}} has been delivered."
		}, `tools[1] "notify"`, "wording.success"},
		{"failure wording reads the receipt", func(d catalogDoc) { d.sub("notify", "wording")["failure"] = "It failed ({{.Receipt.ID}})." }, `tools[1] "notify"`, "wording.failure"},
		{"deferred wording reads the receipt", func(d catalogDoc) { d.sub("note", "wording")["success"] = "Noted as {{.Receipt.ID}}." }, `tools[5] "note"`, "wording.success"},
		{"wording reads an undeclared receipt field", func(d catalogDoc) {
			d.sub("notify", "wording")["success"] = "Sent as {{.Receipt.Fields.message_id}}."
		}, `tools[1] "notify"`, "wording.success"},
		{"pending wording reads the payload", func(d catalogDoc) {
			d.sub("refund", "wording")["pending"] = "Waiting on refund {{.Payload.id}}."
		}, `tools[4] "refund"`, "wording.pending"},
		{"compensation reads the payload", func(d catalogDoc) {
			d.sub("book", "compensation")["args"] = map[string]any{"booking_id": "{{.Payload.id}}"}
		}, `tools[2] "book"`, "compensation.args.booking_id"},
		{"compensation passes an argument its tool does not take", func(d catalogDoc) {
			d.sub("book", "compensation")["args"] = map[string]any{"booking_id": "{{.Receipt.ID}}", "reason": "undo"}
		}, `tools[2] "book"`, "compensation.args.reason"},
		{"wording reads an optional argument", func(d catalogDoc) {
			d.sub("book", "wording")["success"] = "Booking {{.Receipt.ID}} is made for {{.Args.when}}."
		}, `tools[2] "book"`, "wording.success"},
		{"a guard does not make an optional argument safe", func(d catalogDoc) {
			d.sub("book", "wording")["success"] = "Booking {{.Receipt.ID}} is made{{if .Args.when}} for {{.Args.when}}{{end}}."
		}, `tools[2] "book"`, "wording.success"},
		{"connector reads an optional argument", func(d catalogDoc) {
			d.sub("book", "connector")["path"] = "/bookings/{{pathescape .Args.when}}"
		}, `tools[2] "book"`, "connector.path"},
		{"connector reads an optional nested argument", func(d catalogDoc) {
			d.tool("notify")["input_schema"] = map[string]any{"type": "object", "required": []any{"to", "body", "meta"}, "properties": map[string]any{
				"to": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"},
				"meta": map[string]any{"type": "object", "properties": map[string]any{"tag": map[string]any{"type": "string"}}},
			}}
			d.sub("notify", "connector")["body"] = "{{.Args.body}} {{.Args.meta.tag}}"
		}, `tools[1] "notify"`, "connector.body"},
		{"wording reads a session fact", func(d catalogDoc) {
			d.sub("notify", "wording")["success"] = "I've sent it to {{.Session.caller_number}}; Twilio reports it {{.Receipt.Status}}."
		}, `tools[1] "notify"`, "wording.success"},
		{"connector reads a session fact", func(d catalogDoc) { d.sub("notify", "connector")["to"] = "{{.Session.caller_number}}" }, `tools[1] "notify"`, "connector.to"},
		{"compensation reads the session", func(d catalogDoc) {
			d.sub("book", "compensation")["args"] = map[string]any{"booking_id": "{{.Receipt.ID}}{{.Session.id}}"}
		}, `tools[2] "book"`, "compensation.args.booking_id"},
		{"rule reads an undeclared session fact", func(d catalogDoc) {
			d.rule()["args"].(map[string]any)["to"] = "{{.Session.caller_phone}}"
		}, `postcall.rules[0] "callback"`, "args.to"},
		{"delivery reads a session fact when none is declared", func(d catalogDoc) {
			delete(d, "session_facts")
			d.delivery()["args"].(map[string]any)["to"] = "{{.Session.caller_number}}"
		}, `postcall.deliveries[0] "note"`, "args.to"},
		{"session fact without a name", func(d catalogDoc) {
			d["session_facts"] = append(d["session_facts"].([]any), map[string]any{"description": "nameless"})
		}, "session_facts[2]", "name"},
		{"session fact shadows the session ID", func(d catalogDoc) {
			d["session_facts"] = append(d["session_facts"].([]any), map[string]any{"name": "id"})
		}, `session_facts[2] "id"`, "name"},
		{"duplicate session fact", func(d catalogDoc) {
			d["session_facts"] = append(d["session_facts"].([]any), map[string]any{"name": "tenant_id"})
		}, `session_facts[2] "tenant_id"`, "name"},
		{"gated tool without pending wording", func(d catalogDoc) { delete(d.sub("refund", "wording"), "pending") }, `tools[4] "refund"`, "wording.pending"},
		{"pending wording on an ungated tool", func(d catalogDoc) { d.sub("book", "wording")["pending"] = "Hold on." }, `tools[2] "book"`, "wording.pending"},
		{"missing failure wording", func(d catalogDoc) { delete(d.sub("book", "wording"), "failure") }, `tools[2] "book"`, "wording.failure"},
		{"duplicate tool name", func(d catalogDoc) {
			d["tools"] = append(d["tools"].([]any), d.tool("lookup"))
		}, `tools[6] "lookup"`, "name"},
		{"bad tool name", func(d catalogDoc) { d.tool("note")["name"] = "Take Note" }, `tools[5] "Take Note"`, "name"},
		{"missing owner", func(d catalogDoc) { delete(d.tool("note"), "owner") }, `tools[5] "note"`, "owner"},
		{"agent allows an unknown tool", func(d catalogDoc) { d.agent()["allow"] = []any{"lookup", "transfer"} }, `agents[0] "agent"`, "allow"},
		{"agent allows tools without a key", func(d catalogDoc) { delete(d.agent(), "api_key_sha256") }, `agents[0] "agent"`, "api_key_sha256"},
		{"agent key not a sha256", func(d catalogDoc) { d.agent()["api_key_sha256"] = "demo-agent-key" }, `agents[0] "agent"`, "api_key_sha256"},
		{"one key for two principals", func(d catalogDoc) {
			d["operators"].([]any)[0].(map[string]any)["api_key_sha256"] = d.agent()["api_key_sha256"]
		}, `operators[0] "boss"`, "api_key_sha256"},
		{"operator without roles", func(d catalogDoc) { delete(d["operators"].([]any)[0].(map[string]any), "roles") }, `operators[0] "boss"`, "roles"},
		{"unknown on_failure", func(d catalogDoc) { d.agent()["on_failure"] = "retry" }, `agents[0] "agent"`, "on_failure"},
		{"unknown on_reject", func(d catalogDoc) { d.agent()["on_reject"] = "ignore" }, `agents[0] "agent"`, "on_reject"},
		{"unknown while_awaiting_approval", func(d catalogDoc) { d.agent()["while_awaiting_approval"] = "lenient" }, `agents[0] "agent"`, "while_awaiting_approval"},
		{"no room for an approval request", func(d catalogDoc) { d.agent()["max_open_approvals"] = 0 }, `agents[0] "agent"`, "max_open_approvals"},
		{"negative live sessions", func(d catalogDoc) { d.agent()["max_live_sessions"] = -5 }, `agents[0] "agent"`, "max_live_sessions"},
		{"a cap too large to protect anyone", func(d catalogDoc) { d.agent()["max_open_approvals"] = 1_000_000 }, `agents[0] "agent"`, "max_open_approvals"},
		{"record-deferred tool and no postcall section", func(d catalogDoc) { delete(d, "postcall") }, "catalog", "postcall"},
		{"record-deferred tool without a delivery", func(d catalogDoc) { d.postCall()["deliveries"] = []any{} }, "catalog", "postcall.deliveries"},
		{"delivery deadline not a duration", func(d catalogDoc) { d.delivery()["deadline"] = "a day" }, `postcall.deliveries[0] "note"`, "deadline"},
		{"fallback deadline not positive", func(d catalogDoc) {
			d.delivery()["fallbacks"] = []any{map[string]any{"tool": "book", "deadline": "-1h", "args": map[string]any{"text": "{{.Args.text}}"}}}
		}, `postcall.deliveries[0] "note"`, "fallbacks[0].deadline"},
		{"fallback to a tool the postcall agent may not call", func(d catalogDoc) {
			d.delivery()["fallbacks"] = []any{map[string]any{"tool": "lookup"}}
		}, `postcall.deliveries[0] "note".fallbacks[0]`, "tool"},
		{"fallback repeats the delivery's tool", func(d catalogDoc) {
			d.delivery()["fallbacks"] = []any{map[string]any{"tool": "notify", "args": map[string]any{"to": "+15550000001", "body": "{{.Args.text}}"}}}
		}, `postcall.deliveries[0] "note".fallbacks[0]`, "tool"},
		{"urgent without a deadline", func(d catalogDoc) { d.postCall()["urgent"] = map[string]any{"any": []any{"gas"}} }, "catalog", "postcall.urgent.deadline"},
		{"urgent without phrases", func(d catalogDoc) { d.postCall()["urgent"] = map[string]any{"deadline": "5m"} }, "catalog", "postcall.urgent.any"},
		{"urgent rule without an urgent section", func(d catalogDoc) { d.rule()["urgent"] = true }, "catalog", "postcall.urgent"},
		{"postcall without an agent", func(d catalogDoc) { delete(d.postCall(), "agent") }, "catalog", "postcall.agent"},
		{"postcall agent unknown", func(d catalogDoc) { d.postCall()["agent"] = "ghost" }, "catalog", "postcall.agent"},
		{"postcall agent with a key", func(d catalogDoc) {
			d.postCallAgent()["api_key_sha256"] = tools.HashKey("after-call-key")
		}, `agents[1] "after-call"`, "api_key_sha256"},
		{"postcall agent allowed a record-deferred tool", func(d catalogDoc) {
			d.postCallAgent()["allow"] = []any{"notify", "note"}
		}, `agents[1] "after-call"`, "allow"},
		{"agent without a key that is not the postcall agent", func(d catalogDoc) {
			d.postCall()["agent"] = "agent"
			delete(d.agent(), "api_key_sha256")
			d.agent()["allow"] = []any{"notify"}
		}, `agents[1] "after-call"`, "api_key_sha256"},
		{"delivery from a real-sync tool", func(d catalogDoc) { d.delivery()["from"] = "notify" }, `postcall.deliveries[0] "notify"`, "from"},
		{"delivery from an unknown tool", func(d catalogDoc) { d.delivery()["from"] = "ghost" }, `postcall.deliveries[0] "ghost"`, "from"},
		{"delivery without from", func(d catalogDoc) { delete(d.delivery(), "from") }, "postcall.deliveries[0]", "from"},
		{"two deliveries from one tool", func(d catalogDoc) { appendCopy(d.postCall(), "deliveries") }, `postcall.deliveries[1] "note"`, "from"},
		{"delivery without a tool", func(d catalogDoc) { delete(d.delivery(), "tool") }, `postcall.deliveries[0] "note"`, "tool"},
		{"delivery to an unknown tool", func(d catalogDoc) { d.delivery()["tool"] = "ghost" }, `postcall.deliveries[0] "note"`, "tool"},
		{"delivery to a record-deferred tool", func(d catalogDoc) {
			d.delivery()["tool"] = "note"
			d.delivery()["args"] = map[string]any{"text": "{{.Args.text}}"}
		}, `postcall.deliveries[0] "note"`, "tool"},
		{"delivery to a tool the postcall agent may not call", func(d catalogDoc) {
			d.delivery()["tool"] = "unbook"
			d.delivery()["args"] = map[string]any{"booking_id": "{{.Args.text}}"}
		}, `postcall.deliveries[0] "note"`, "tool"},
		{"delivery passes an argument its tool does not take", func(d catalogDoc) {
			d.delivery()["args"].(map[string]any)["from"] = "+15550000001"
		}, `postcall.deliveries[0] "note"`, "args.from"},
		{"delivery misses a required argument", func(d catalogDoc) { delete(d.delivery()["args"].(map[string]any), "body") }, `postcall.deliveries[0] "note"`, "args"},
		{"delivery reads an argument the intent does not declare", func(d catalogDoc) {
			d.delivery()["args"].(map[string]any)["body"] = "{{.Args.message}}"
		}, `postcall.deliveries[0] "note"`, "args.body"},
		{"delivery reads the receipt", func(d catalogDoc) {
			d.delivery()["args"].(map[string]any)["body"] = "{{.Receipt.ID}}"
		}, `postcall.deliveries[0] "note"`, "args.body"},
		{"delivery argument is empty", func(d catalogDoc) { d.delivery()["args"].(map[string]any)["to"] = " " }, `postcall.deliveries[0] "note"`, "args.to"},
		{"delivery template does not parse", func(d catalogDoc) {
			d.delivery()["args"].(map[string]any)["body"] = "{{.Args.text"
		}, `postcall.deliveries[0] "note"`, "args.body"},
		{"rule fills a non-string argument", func(d catalogDoc) {
			d.postCallAgent()["allow"] = []any{"notify", "refund"}
			d.rule()["tool"] = "refund"
			d.rule()["args"] = map[string]any{"cents": "{{.Args.text}}"}
		}, `postcall.rules[0] "callback"`, "args.cents"},
		{"rule to a readonly tool", func(d catalogDoc) {
			d.postCallAgent()["allow"] = []any{"notify", "lookup"}
			d.rule()["tool"] = "lookup"
			d.rule()["args"] = map[string]any{"id": "{{.Session.tenant_id}}"}
		}, `postcall.rules[0] "callback"`, "tool"},
		{"rule without a name", func(d catalogDoc) { delete(d.rule(), "name") }, "postcall.rules[0]", "name"},
		{"rule name unfit for a key", func(d catalogDoc) { d.rule()["name"] = "call-back" }, `postcall.rules[0] "call-back"`, "name"},
		{"duplicate rule name", func(d catalogDoc) { appendCopy(d.postCall(), "rules") }, `postcall.rules[1] "callback"`, "name"},
		{"rule without a speaker", func(d catalogDoc) { delete(d.rule(), "speaker") }, `postcall.rules[0] "callback"`, "speaker"},
		{"rule without phrases", func(d catalogDoc) { d.rule()["any"] = []any{} }, `postcall.rules[0] "callback"`, "any"},
		{"rule phrase without words", func(d catalogDoc) { d.rule()["any"] = []any{"call me back", "?!"} }, `postcall.rules[0] "callback"`, "any[1]"},
		{"rule reads a turn field that does not exist", func(d catalogDoc) {
			d.rule()["args"].(map[string]any)["body"] = "{{.Args.words}}"
		}, `postcall.rules[0] "callback"`, "args.body"},
		{"rule reads the payload", func(d catalogDoc) {
			d.rule()["args"].(map[string]any)["body"] = "{{.Payload.text}}"
		}, `postcall.rules[0] "callback"`, "args.body"},
		{"rule to a tool the postcall agent may not call", func(d catalogDoc) {
			d.postCallAgent()["allow"] = []any{"book"}
		}, `postcall.rules[0] "callback"`, "tool"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := minimalDoc(t)
			tc.mutate(d)
			data, err := yaml.Marshal(map[string]any(d))
			require.NoError(t, err)

			_, err = tools.Load(data)
			require.Error(t, err)
			problems := fieldErrors(err)
			for _, p := range problems {
				if p.Row == tc.row && p.Field == tc.field {
					return
				}
			}
			require.Failf(t, "refusal does not name the row and field", "want %s: %s, got:\n%v", tc.row, tc.field, err)
		})
	}
}

// Only a tool an agent may call is offered to a model: a compensation run
// by rollback alone may describe itself for people.
func TestDescriptionRuleSparesToolsNoAgentCalls(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	require.Equal(t, "Undoes book.", d.tool("unbook")["description"])
	for _, desc := range []string{"Call when x.", "Call only when x.", "Call if x.", "Call only if x.", "Use when x.", "Use only when x."} {
		require.True(t, tools.PrescribesWhen(desc), desc)
	}
	for _, desc := range []string{"Call to book a visit.", "call when x.", "Books a visit when asked.", "Use when"} {
		require.False(t, tools.PrescribesWhen(desc), desc)
	}
	_, err := tools.Load([]byte(minimalCatalog))
	require.NoError(t, err)
}

func TestTemplatesMayReadWhatIsAlwaysPresent(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	// Required arguments, the session's ID, declared receipt fields, an
	// optional argument read through index, and declared session facts in
	// post-call arguments are present whenever the template renders.
	d.sub("book", "wording")["success"] = `Booking {{.Receipt.ID}} ({{.Receipt.Fields.resource_id}}) is made{{with index .Args "when"}} for {{.}}{{end}} in session {{.Session.id}}.`
	d.sub("notify", "connector")["body"] = "{{.Args.body}} ({{.OperationKey}}, {{.Session.id}})"
	d.rule()["args"].(map[string]any)["body"] = "{{.Args.text}} from tenant {{.Session.tenant_id}}"
	data, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)
	c, err := tools.Load(data)
	require.NoError(t, err)
	require.Equal(t, []tools.SessionFact{{Name: "caller_number"}, {Name: "tenant_id"}}, c.SessionFacts())
}

func TestOptionalArgumentRefusalNamesTheFix(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	d.sub("book", "wording")["success"] = "Booking {{.Receipt.ID}} is made for {{.Args.when}}."
	data, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)
	_, err = tools.Load(data)
	require.ErrorContains(t, err, `tools[2] "book": wording.success: reads .Args.when, but input_schema does not require when, so it can be absent when this renders`)
	require.ErrorContains(t, err, `{{with index .Args "when"}}`)
}

func TestLoadReportsEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	delete(d.sub("refund", "approval"), "approver_role")
	d.tool("lookup")["effect"] = "peek"
	data, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)

	_, err = tools.Load(data)
	require.ErrorContains(t, err, `tools[4] "refund": approval.approver_role: money tools need an approver role`)
	require.ErrorContains(t, err, `tools[0] "lookup": effect: unknown value "peek"`)
}

func TestLoadRefusesUnknownKeys(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	d.tool("refund")["aproval"] = d.tool("refund")["approval"]
	data, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)

	_, err = tools.Load(data)
	require.ErrorContains(t, err, "aproval")
}

func TestLoadRefusesEmptyInput(t *testing.T) {
	t.Parallel()
	_, err := tools.Load(nil)
	require.ErrorContains(t, err, "empty")
}

// fieldErrors flattens the joined refusal into its FieldErrors.
func fieldErrors(err error) []*tools.FieldError {
	switch e := err.(type) {
	case *tools.FieldError:
		return []*tools.FieldError{e}
	case interface{ Unwrap() []error }:
		var out []*tools.FieldError
		for _, inner := range e.Unwrap() {
			out = append(out, fieldErrors(inner)...)
		}
		return out
	case interface{ Unwrap() error }:
		return fieldErrors(e.Unwrap())
	}
	return nil
}

func TestAutoApprovalRestsOnTrustedFactsOnly(t *testing.T) {
	t.Parallel()
	c, err := tools.Load([]byte(minimalCatalog))
	require.NoError(t, err)
	notify, _ := c.Tool("notify")
	require.Nil(t, notify.Approval.Provenance, "no list: the default")
	signed, err := maestrotype.PlatformSigned("twilio")
	require.NoError(t, err)
	require.False(t, notify.Approval.TrustsFact(maestrotype.ProvenanceAgentDeclared), "the agent's word never approves by default")
	require.True(t, notify.Approval.TrustsFact(maestrotype.ProvenanceOperator))
	require.True(t, notify.Approval.TrustsFact(signed))

	d := minimalDoc(t)
	d.sub("notify", "approval")["auto_approve_provenance"] = []any{"platform-signed:twilio"}
	raw, err := yaml.Marshal(d)
	require.NoError(t, err)
	c, err = tools.Load(raw)
	require.NoError(t, err)
	notify, _ = c.Tool("notify")
	require.Equal(t, []maestrotype.Provenance{signed}, notify.Approval.Provenance)
	require.True(t, notify.Approval.TrustsFact(signed))
	require.False(t, notify.Approval.TrustsFact(maestrotype.ProvenanceOperator), "a list names every source it accepts")
	other, _ := maestrotype.PlatformSigned("vonage")
	require.False(t, notify.Approval.TrustsFact(other))
}

func TestTrustingDeclaredFactsOpensEveryRuleToTheAgentsWord(t *testing.T) {
	t.Parallel()
	raw, err := tools.TrustingDeclaredFacts(tools.DemoCatalogYAML)
	require.NoError(t, err)
	c, err := tools.Load(raw)
	require.NoError(t, err)
	for _, name := range []string{"send_sms", "email_property_manager"} {
		tool, _ := c.Tool(name)
		require.True(t, tool.Approval.TrustsFact(maestrotype.ProvenanceAgentDeclared), name)
	}
	sms, _ := c.Tool("send_sms")
	signed, _ := maestrotype.PlatformSigned("twilio")
	require.True(t, sms.Approval.TrustsFact(signed), "the catalog's own list is kept")

	demo, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	for _, tool := range demo.Tools() {
		require.False(t, tool.Approval.TrustsFact(maestrotype.ProvenanceAgentDeclared), "the demo catalog trusts no agent's word: %s", tool.Name)
	}
}

// on_unknown opts a real-sync tool in to sending again; it is hold unless
// the row says otherwise.
func TestOnUnknownDefaultsToHoldAndAcceptsResend(t *testing.T) {
	t.Parallel()
	c, err := tools.Load([]byte(minimalCatalog))
	require.NoError(t, err)
	notify, _ := c.Tool("notify")
	require.False(t, notify.Resends(), "hold unless the row opts in")

	d := minimalDoc(t)
	d.tool("notify")["on_unknown"] = "resend"
	d.tool("note")["on_unknown"] = "hold"
	data, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)
	c, err = tools.Load(data)
	require.NoError(t, err)
	notify, _ = c.Tool("notify")
	require.Equal(t, tools.OnUnknownResend, notify.OnUnknown)
	require.True(t, notify.Resends())
}
