package activities

import (
	mt "github.com/maestro-run/maestro/maestrotype"
)

// pageHeldMoney raises a money effect held for reconciliation to the role
// that approves it: money whose outcome is unknown must not wait for
// someone to happen to read the queue. Until notification channels exist
// the page is an error-level log line carrying the operation key and the
// approver role, for the log pipeline's alerting to route.
func (a *Activities) pageHeldMoney(tool, operationKey, why string) {
	t, ok := a.cfg.Catalog.Tool(tool)
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
