package api

import (
	"context"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/tools"
)

// ensureSessionWorkflow makes sure the session's workflow runs before its
// end is recorded, as a platform's end-of-call event and POST
// /v1/sessions/{id}/end do: the call-ended signal the end queues is owed
// to that workflow, and one that never started would leave the signal
// abandoned and the post-call work undone. A session that made no call
// has none yet. On failure nothing is ended, and the caller is told to try
// again. agent is the session's agent; nil looks it up in the catalog.
func (s *Server) ensureSessionWorkflow(ctx context.Context, agent *tools.Agent, sess ledger.Session) *apitype.Refusal {
	if sess.EndedAt != nil {
		return nil
	}
	if agent == nil {
		var ok bool
		if agent, ok = s.cfg.Catalog.Load().Agent(sess.AgentID); !ok {
			// An agent since removed from the catalog still owns its
			// sessions; its session starts without a policy, which only
			// a catalog agent has.
			agent = &tools.Agent{ID: sess.AgentID}
		}
	}
	if err := s.cfg.Gate.StartSession(ctx, agent, sess.ID); err != nil {
		s.cfg.Logger.Error("could not start the session workflow; the session is not ended", "session", sess.ID, "err", err)
		return unavailableRefusal()
	}
	return nil
}
