package api

import (
	"context"
	"errors"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
)

// oweCallback records, before the agent hears "pending", that the final
// observation is owed to its callback URL. If that cannot be recorded the
// agent is refused rather than told to wait for a callback that will never
// come; re-sending under the same operation key is safe and owes it again.
func (s *Server) oweCallback(ctx context.Context, inv ledger.Invocation) *apitype.Refusal {
	agent, ok := s.cfg.Catalog.Load().Agent(inv.AgentID)
	if !ok || agent.Callback == nil {
		return nil
	}
	if err := s.cfg.Store.CallbackOwe(ctx, inv.ID, agent.ID, agent.Callback.URL.String()); err != nil {
		s.cfg.Logger.Error("could not record an owed callback", "invocation", inv.ID, "agent", agent.ID, "err", err)
		return unavailableRefusal()
	}
	return nil
}

// mayOweCallback reports whether an invocation may have a callback row:
// one is owed only to an agent with a callback URL, so a final answer to
// an agent without one reads none. An agent the catalog no longer knows
// is read for.
func (s *Server) mayOweCallback(inv ledger.Invocation) bool {
	agent, ok := s.cfg.Catalog.Load().Agent(inv.AgentID)
	return !ok || agent.Callback != nil
}

// callbackView is how the invocation's callback stands, or nil when none
// is owed.
func (s *Server) callbackView(ctx context.Context, inv ledger.Invocation) *apitype.Callback {
	cb, err := s.cfg.Store.CallbackGet(ctx, inv.ID)
	if err != nil {
		if !errors.Is(err, ledger.ErrNotFound) {
			s.cfg.Logger.Error("could not read an invocation's callback", "invocation", inv.ID, "err", err)
		}
		return nil
	}
	return &apitype.Callback{Status: string(cb.Status), Attempts: cb.Attempts, LastError: cb.LastError, DeliveredAt: cb.DeliveredAt}
}
