package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/maestro-run/maestro/internal/admission"
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

// requireKey admits requests whose bearer key lookup recognises, storing
// what it found in the request context under key. A client that failed
// too many key checks is refused before its key is looked at.
func requireKey[T any](s *Server, lookup func(string) (T, bool), key ctxKey, realm, what string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		client, refused := s.throttled(w, r)
		if refused {
			return
		}
		presented := bearer(r)
		v, ok := lookup(presented)
		s.keyChecked(client, what+" key", presented, ok)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm+`"`)
			writeRefusal(w, admission.BadRequest(http.StatusUnauthorized, mt.CodeUnauthorized,
				"a valid "+what+" key is required: send Authorization: Bearer <"+what+" key>"))
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), key, v)))
	}
}

// agentOnly admits requests carrying a valid agent key. The key is looked
// up in the catalog served at the time of each request, so a reload that
// changes or removes a key ends its access at once.
func (s *Server) agentOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		requireKey(s, s.cfg.Catalog.Load().AgentByKey, agentKey, "maestro", "agent", next)(w, r)
	}
}

// opsOnly admits requests carrying a valid operator key, or made in
// process on behalf of an operator the caller signed in (see AsOperator).
func (s *Server) opsOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if op, ok := s.inProcessOperator(r); ok {
			next(w, r.WithContext(AsOperator(r.Context(), op)))
			return
		}
		requireKey(s, s.cfg.Catalog.Load().OperatorByKey, operatorKey, "maestro-ops", "operator", next)(w, r)
	}
}

// AsOperator returns ctx carrying op as the authenticated operator of a
// request handed to the server in process, by a caller that authenticated
// the operator itself (the console signs operators in with their key and
// keeps a session). Nothing arriving over the network can set it.
func AsOperator(ctx context.Context, op *tools.Operator) context.Context {
	return context.WithValue(ctx, operatorKey, op)
}

// inProcessOperator is the operator AsOperator set, checked against the
// current catalog so an operator removed by a reload loses access at once.
func (s *Server) inProcessOperator(r *http.Request) (*tools.Operator, bool) {
	op := operatorFrom(r.Context())
	if op == nil {
		return nil, false
	}
	current, ok := s.cfg.Catalog.Load().Operator(op.ID)
	return current, ok
}

func agentFrom(ctx context.Context) *tools.Agent {
	a, _ := ctx.Value(agentKey).(*tools.Agent)
	return a
}

func operatorFrom(ctx context.Context) *tools.Operator {
	o, _ := ctx.Value(operatorKey).(*tools.Operator)
	return o
}
