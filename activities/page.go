package activities

import (
	"expvar"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// HeldDeliveries counts post-call work held for a human since the process
// started: every deferred promise no channel kept. GET /metrics shows it.
var HeldDeliveries = expvar.NewInt("maestro_postcall_held_total")

// OnCallRole is the role paged when post-call work is held: the one that
// reconciles it.
const OnCallRole = ReconcilerRole

// pageHeldMoney raises a money effect held for reconciliation to the role
// that approves it: money whose outcome is unknown must not wait for
// someone to happen to read the queue. Until notification channels exist
// the page is an error-level log line carrying the operation key and the
// approver role, for the log pipeline's alerting to route.
func (a *Activities) pageHeldMoney(tool, operationKey, why string) {
	t, ok := a.cfg.Catalog.Load().Tool(tool)
	if !ok || t.Effect != mt.EffectMoney {
		return
	}
	role := ""
	if t.Approval != nil {
		role = t.Approval.ApproverRole
	}
	a.cfg.Logger.Error("money held for reconciliation: page the approver role",
		"page", true, "operation_key", operationKey, "tool", tool, "approver_role", role, "why", why)
}

// pageHeldDelivery raises post-call work that no channel delivered: the
// agent told the caller it would be done, so someone must do it by hand
// today. Like held money, the page is an error-level log line until
// notification channels exist, carrying what the on-call human needs.
func (a *Activities) pageHeldDelivery(d workflows.Delivery) {
	HeldDeliveries.Add(1)
	a.cfg.Logger.Error("post-call work held for a human: page the on-call role",
		"page", true, "role", OnCallRole, "session", d.SessionID, "item", d.Item.Key, "tool", d.Item.Tool,
		"deferred_id", d.Item.DeferredID, "urgent", d.Item.Urgent, "attempts", len(d.Attempts), "why", d.Summary)
}
