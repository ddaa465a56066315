package admission

import (
	"context"
	"fmt"
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// ensureSession makes sure the session's workflow runs before the call is
// recorded. The session's workflow holds its policy, its saga and its end,
// and only the first call starts it (ADR 8). It is started before, not
// beside, the invocation's: an effect that ran in a session with no
// workflow could be neither rolled back nor ended, so a call whose session
// cannot be started records nothing and runs nothing. The first call of a
// session pays one more round trip to Temporal for that.
func (g *Gate) ensureSession(ctx context.Context, c call, sess ledger.Session) error {
	if sess.State == mt.SessionEnded || g.sessions.has(sess.ID) {
		return nil
	}
	if err := g.StartSession(ctx, c.agent, sess.ID); err != nil {
		g.cfg.Logger.Error("call refused: its session's workflow could not be started", "session", sess.ID, "agent", c.agent.ID, "err", err)
		return refuseSessionNotStarted(sess.ID)
	}
	return nil
}

func refuseSessionNotStarted(sessionID string) *apitype.Refusal {
	return refuse(http.StatusServiceUnavailable, observation.Failure{
		Code:          mt.CodeInternal,
		Summary:       fmt.Sprintf("Session %s could not be started, so the call was not recorded; nothing was run", sessionID),
		RootCause:     "The session's workflow, which rolls back and ends the session, did not start; the server logged why.",
		Remediation:   "Send the same request again in a moment: nothing of it was recorded, so it cannot run twice.",
		StopCondition: "Stop after three failures and hand over to a human.",
		Wording:       "I couldn't do that just now; let me try once more.",
	})
}
