package tools

import (
	"fmt"
	"slices"
	"strings"
)

// A Permission is an operator action, beside deciding approvals, that
// only some roles may take: each reads or changes what no single
// operator should by default.
type Permission string

const (
	// PermDecodePayloads lets an operator decrypt workflow payloads
	// through the codec endpoint: every argument and transcript in clear.
	PermDecodePayloads Permission = "decode_payloads"
	// PermReloadCatalog lets an operator swap the catalog every process
	// follows.
	PermReloadCatalog Permission = "reload_catalog"
	// PermRunCanary lets an operator fire the canary tools at their
	// providers.
	PermRunCanary Permission = "run_canary"
	// PermSettleReconciliations lets an operator declare by hand what
	// happened to a held effect.
	PermSettleReconciliations Permission = "settle_reconciliations"
	// PermVouchFacts lets an operator vouch for a session fact.
	PermVouchFacts Permission = "vouch_facts"
)

// Action says in words what the permission lets an operator do.
func (p Permission) Action() string {
	switch p {
	case PermDecodePayloads:
		return "decrypt workflow payloads"
	case PermReloadCatalog:
		return "reload the catalog"
	case PermRunCanary:
		return "run the canary"
	case PermSettleReconciliations:
		return "settle a held effect by hand"
	case PermVouchFacts:
		return "vouch for session facts"
	}
	return string(p)
}

// permissions lists every permission, in the order documented.
var permissions = []Permission{PermDecodePayloads, PermReloadCatalog, PermRunCanary, PermSettleReconciliations, PermVouchFacts}

// defaultPermissionRoles are the roles that hold a permission a catalog's
// permissions section leaves out.
var defaultPermissionRoles = map[Permission][]string{
	PermDecodePayloads:        {"admin"},
	PermReloadCatalog:         {"admin"},
	PermRunCanary:             {"admin", "ops"},
	PermSettleReconciliations: {"admin", "manager"},
	PermVouchFacts:            {"ops", "manager"},
}

// PermissionRoles are the roles that hold permission p, as the catalog
// sets them or by default.
func (c *Catalog) PermissionRoles(p Permission) []string {
	if roles, ok := c.permissions[p]; ok {
		return slices.Clone(roles)
	}
	return slices.Clone(defaultPermissionRoles[p])
}

// Permits reports whether op holds a role that grants permission p.
func (c *Catalog) Permits(op *Operator, p Permission) bool {
	return op != nil && slices.ContainsFunc(c.PermissionRoles(p), op.HasRole)
}

// buildPermissions reads the permissions section: for each permission
// named, the roles that hold it.
func buildPermissions(p *problems, section map[string][]string) map[Permission][]string {
	out := make(map[Permission][]string, len(section))
	names := make([]string, 0, len(section))
	for name := range section {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		perm := Permission(name)
		if !slices.Contains(permissions, perm) {
			p.addRule("permissions", "permissions", name, "unknown permission (want %s)", permissionList())
			continue
		}
		out[perm] = section[name]
	}
	return out
}

// permissionsSection checks each permission's roles: a list that grants
// nobody is a typo or a lock-out, either way not what the author meant.
func (v *validator) permissionsSection() {
	for _, perm := range permissions {
		roles, ok := v.c.permissions[perm]
		if !ok {
			continue
		}
		if len(roles) == 0 {
			v.p.addRule("permissions", "permissions", string(perm), "is empty: leave it out for the default %s", strings.Join(defaultPermissionRoles[perm], ", "))
			continue
		}
		for i, role := range roles {
			f := fmt.Sprintf("%s[%d]", perm, i)
			switch {
			case role == "":
				v.p.addRule("permissions", "permissions", f, "must name a role")
			case !v.someoneHolds(role):
				v.p.addRule("permissions", "permissions", f, "no operator holds role %q, so it grants %s to nobody", role, perm)
			}
		}
	}
}

func permissionList() string {
	names := make([]string, len(permissions))
	for i, p := range permissions {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}
