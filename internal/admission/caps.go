package admission

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// capField is the catalog field that sets each cap.
var capField = map[ledger.Cap]string{
	ledger.CapOpenApprovals: "max_open_approvals",
	ledger.CapLiveSessions:  "max_live_sessions",
}

// RefuseOverCap refuses a call past one of its agent's caps, or returns nil
// when err is no *ledger.CapError. Nothing was recorded or run, so the
// same call succeeds once the agent is back under the cap.
func RefuseOverCap(err error) *apitype.Refusal {
	var ce *ledger.CapError
	if !errors.As(err, &ce) {
		return nil
	}
	f := observation.Failure{
		Code:    mt.CodeAgentCapReached,
		Payload: map[string]any{"cap": capField[ce.Cap], "limit": ce.Limit, "held": ce.Held},
	}
	switch ce.Cap {
	case ledger.CapOpenApprovals:
		f.Summary = fmt.Sprintf("Agent %s already has %d requests waiting for a human (max_open_approvals is %d); nothing was run", ce.AgentID, ce.Held, ce.Limit)
		f.RootCause = "The catalog caps how many of an agent's calls may wait for approval at once, so no agent can drown the approval queue."
		f.Remediation = "Tell the person a team member must first decide the requests already waiting; this call can be made again after that."
		f.StopCondition = "Make no more calls that need approval until an operator has decided some of the open requests."
		f.Wording = "I can't request that right now; a team member has to look at the earlier requests first."
	default:
		f.Summary = fmt.Sprintf("Agent %s already has %d sessions open (max_live_sessions is %d); nothing was run", ce.AgentID, ce.Held, ce.Limit)
		f.RootCause = "The catalog caps how many of an agent's sessions may be open (not ended) at once."
		f.Remediation = "End the sessions whose conversations are over (POST /v1/sessions/{id}/end), or ask an operator to resolve halted ones, then call again."
		f.StopCondition = "Open no new session until some of this agent's sessions have ended."
		f.Wording = "I can't start on that right now; please try again shortly."
	}
	return refuse(http.StatusTooManyRequests, f)
}
