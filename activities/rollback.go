package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// claimSession is the session an effect claim is refused in while it is
// being rolled back: the call's own, unless the call is a compensation.
func claimSession(in workflows.ExecuteInput) string {
	if workflows.IsCompensationKey(in.OperationKey) {
		return ""
	}
	return in.SessionID
}

// rollingBackObservation answers a call whose effect was not claimed
// because its session's rollback had begun: nothing was sent.
func rollingBackObservation(tool *tools.Tool, in workflows.ExecuteInput) mt.Observation {
	return observation.Error(observation.Failure{
		Code:          mt.CodeSessionRollingBack,
		Summary:       fmt.Sprintf("Session %s is being rolled back; %s was not run", in.SessionID, in.Tool),
		RootCause:     "A rollback closes the session to new writes before it undoes what was done.",
		Remediation:   "Tell the person the earlier requests are being undone; ask again once the rollback has finished if they still want this.",
		StopCondition: "Do not retry this write until the rollback has finished.",
		Wording:       "I'm undoing the earlier requests now, so I haven't done that.",
		Payload:       map[string]any{"session_state": mt.SessionRollingBack, "session_id": in.SessionID},
	}, source(tool, in))
}

// duringRollback tells the truth about an effect that completed while its
// session was being rolled back: it happened, and the rollback, which
// waited for it, is undoing it (or cannot, for a write with no
// compensation). The receipt stays: the effect did happen.
func (a *Activities) duringRollback(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, obs mt.Observation) (mt.Observation, error) {
	if claimSession(in) == "" {
		return obs, nil
	}
	sess, err := a.cfg.Store.SessionGet(ctx, in.SessionID)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		// Sessions are created with their first call; a call made outside
		// admission has none, and nothing is rolling it back.
		return obs, nil
	case err != nil:
		// The effect is settled: a retry finds it so and asks again.
		return obs, retryable(ErrTypeLedger, fmt.Errorf("error reading the session of a completed call: %w", err))
	}
	if sess.RollbackStartedAt == nil {
		return obs, nil
	}
	return rollingBackWording(tool, obs), nil
}

// rollingBackWording is a success's observation once its session's
// rollback has begun: undone with the rest if the tool has a
// compensation, passed to the team if not.
func rollingBackWording(tool *tools.Tool, obs mt.Observation) mt.Observation {
	undone := tool.Compensation != nil
	if undone {
		obs.Summary += "; the session is being rolled back, and this is being undone"
		obs.Wording = "That went through just as the earlier requests were being cancelled, so I'm undoing it too."
	} else {
		obs.Summary += "; the session is being rolled back, but this cannot be undone"
		obs.Wording = "That went through before I could stop it, and it can't be undone automatically; I'll pass it to the team."
	}
	obs.Payload = mergePayload(obs.Payload, map[string]any{"session_state": mt.SessionRollingBack, "being_undone": undone})
	return obs
}

// mergePayload adds fields to an object payload. Any other payload is
// the provider's shape, left as it is: the summary says the same.
func mergePayload(payload json.RawMessage, fields map[string]any) json.RawMessage {
	obj := map[string]any{}
	if len(payload) > 0 && json.Unmarshal(payload, &obj) != nil {
		return payload
	}
	for k, v := range fields {
		obj[k] = v
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return payload
	}
	return out
}
