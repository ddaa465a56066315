package tools

import (
	"fmt"
	"slices"
)

// MayVouchFor reports whether the operator with this ID, as this catalog
// has them, may vouch for the facts tool's auto-approval rule rests on:
// they hold the tool's approver role or one of its vouch roles. A vouch
// lets a call through without a human, so it takes the authority an
// approval would.
func (c *Catalog) MayVouchFor(tool *Tool, operatorID string) bool {
	if tool == nil || tool.Approval == nil {
		return false
	}
	op, ok := c.Operator(operatorID)
	if !ok {
		return false
	}
	a := tool.Approval
	return a.ApproverRole != "" && op.HasRole(a.ApproverRole) || slices.ContainsFunc(a.VouchRoles, op.HasRole)
}

// vouchRoles checks a gated tool's vouch_roles: they only make sense
// beside a rule, and each must be a role someone holds.
func (v *validator) vouchRoles(row string, t *Tool) {
	a := t.Approval
	if a == nil || a.VouchRoles == nil {
		return
	}
	p := v.p
	switch {
	case a.AutoApproveWhen == "":
		p.add(row, "approval.vouch_roles", "names who may vouch for the facts a rule rests on, and there is no auto_approve_when rule")
		return
	case len(a.VouchRoles) == 0:
		p.add(row, "approval.vouch_roles", "is empty: leave it out to let only the approver role vouch")
		return
	}
	for i, role := range a.VouchRoles {
		f := fmt.Sprintf("approval.vouch_roles[%d]", i)
		switch {
		case role == "":
			p.add(row, f, "must name a role")
		case !v.someoneHolds(role):
			p.add(row, f, "no operator holds role %q, so nobody could vouch with it", role)
		}
	}
}

// someoneHolds reports whether any operator holds role.
func (v *validator) someoneHolds(role string) bool {
	return slices.ContainsFunc(v.c.operators, func(o *Operator) bool { return o.HasRole(role) })
}
