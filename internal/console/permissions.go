package console

import (
	"strings"

	"github.com/maestro-run/maestro/tools"
)

// permit says whether the signed-in operator may take an action the
// catalog's permissions restrict, and if not, which roles could: a page
// shows the action only to those who may take it, and tells the others
// whom to ask. The API enforces the same rule on every request.
type permit struct {
	Allowed bool
	// Roles are the roles that grant the permission, "admin or manager".
	Roles string
	// Action says what the permission allows, in words.
	Action string
}

func (c *Console) permit(op *tools.Operator, perm tools.Permission) permit {
	cat := c.cfg.Catalog.Load()
	return permit{Allowed: cat.Permits(op, perm), Roles: strings.Join(cat.PermissionRoles(perm), " or "), Action: perm.Action()}
}
