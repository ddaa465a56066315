package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// permitted admits an operator opsOnly authenticated only if the current
// catalog grants them perm.
func (s *Server) permitted(perm tools.Permission, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ref := s.checkPermission(r, operatorFrom(r.Context()), perm); ref != nil {
			writeRefusal(w, ref)
			return
		}
		next(w, r)
	}
}

// checkPermission refuses, and logs, an operator the current catalog does
// not grant perm. The catalog is read per request, so a reload that takes
// a role away takes the permission with it at once.
func (s *Server) checkPermission(r *http.Request, op *tools.Operator, perm tools.Permission) *apitype.Refusal {
	cat := s.cfg.Catalog.Load()
	if cat.Permits(op, perm) {
		return nil
	}
	roles := cat.PermissionRoles(perm)
	id := ""
	if op != nil {
		id = op.ID
	}
	s.cfg.Logger.Warn("operator refused: no role grants the permission", "operator", id, "permission", string(perm),
		"roles", roles, "route", r.Method+" "+r.URL.Path)
	return permissionRefusal(id, perm, roles)
}

// permissionRefusal is the 403 for an operator without perm; it names the
// permission and the roles that grant it, so the operator knows whom to ask.
func permissionRefusal(operatorID string, perm tools.Permission, roles []string) *apitype.Refusal {
	return &apitype.Refusal{HTTPStatus: http.StatusForbidden, Observation: observation.Error(observation.Failure{
		Code:          mt.CodeNotPermitted,
		Summary:       fmt.Sprintf("operator %s may not %s: it needs one of the roles %s; the attempt was logged", operatorID, perm.Action(), strings.Join(roles, ", ")),
		RootCause:     fmt.Sprintf("The catalog's permissions.%s grants it to the roles %s, and the operator holds none of them.", perm, strings.Join(roles, ", ")),
		Remediation:   "Ask an operator holding one of those roles, or have the catalog give you one.",
		StopCondition: "Do not retry with this key.",
		Payload:       map[string]any{"permission": string(perm), "roles": roles},
	}, &mt.Source{System: "maestro"})}
}
