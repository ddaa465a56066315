package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/maestro-run/maestro/admission"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

type ctxKey int

const (
	agentKey ctxKey = iota
	operatorKey
)

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// agentOnly admits requests carrying a valid agent key.
func (s *Server) agentOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		agent, ok := s.cfg.Catalog.AgentByKey(bearer(r))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="maestro"`)
			writeRefusal(w, admission.BadRequest(http.StatusUnauthorized, mt.CodeUnauthorized,
				"a valid agent key is required: send Authorization: Bearer <agent key>"))
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), agentKey, agent)))
	}
}

func agentFrom(ctx context.Context) *tools.Agent {
	a, _ := ctx.Value(agentKey).(*tools.Agent)
	return a
}

// opsOnly admits requests carrying a valid operator key.
func (s *Server) opsOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		op, ok := s.cfg.Catalog.OperatorByKey(bearer(r))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="maestro-ops"`)
			writeRefusal(w, admission.BadRequest(http.StatusUnauthorized, mt.CodeUnauthorized,
				"a valid operator key is required: send Authorization: Bearer <ops key>"))
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), operatorKey, op)))
	}
}

func operatorFrom(ctx context.Context) *tools.Operator {
	o, _ := ctx.Value(operatorKey).(*tools.Operator)
	return o
}
