package admission

import (
	"context"
	"encoding/json"
	"fmt"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/store"
	"github.com/maestro-run/maestro/tools"
)

// contextCalls is how many of the session's recent calls an approver sees.
const contextCalls = 5

// openApproval freezes a gated call in an approval request before the
// workflow starts, so the agent's 202 already names a request an approver
// can find.
func (g *Gate) openApproval(ctx context.Context, tool *tools.Tool, inv store.Invocation, sess store.Session) (store.ApprovalRequest, error) {
	policy := tool.Approval
	if policy == nil {
		policy = &tools.Approval{}
	}
	recent, err := g.recentCalls(ctx, inv)
	if err != nil {
		return store.ApprovalRequest{}, err
	}
	now := g.cfg.Now().UTC()
	req := store.ApprovalRequest{
		InvocationID:  inv.ID,
		OperationKey:  inv.OperationKey,
		SessionID:     inv.SessionID,
		AgentID:       inv.AgentID,
		Tool:          inv.Tool,
		Args:          inv.Args,
		ArgsHash:      inv.ArgsHash,
		ApproverRole:  policy.ApproverRole,
		Reason:        gateReason(tool),
		RiskTags:      tool.RiskTags,
		Effect:        tool.Effect,
		Reversibility: tool.Reversibility,
		Context:       recent,
		Status:        store.ApprovalPending,
		TimeoutAt:     now.Add(policy.Timeout),
	}
	// A rule may pre-approve a non-money call; the decision is recorded
	// with the rule as its actor. The loader refuses rules on money tools.
	// The rule sees only the facts whose source it trusts: a fact the agent
	// merely stated is absent, so a rule reading it does not fire and the
	// call goes to a human.
	if policy.Condition != nil && tool.Effect != mt.EffectMoney &&
		policy.Condition.Approves(decodeArgs(inv.Args), sessionFacts(inv.SessionID, sess.FactsTrusted(policy.TrustsFact))) {
		req.Status = store.ApprovalAutoApproved
		req.DecidedBy = "rule:" + policy.Condition.String()
		req.DecidedAt = &now
	}
	apr, err := g.cfg.Store.ApprovalRequestInsert(ctx, req)
	if err != nil {
		return store.ApprovalRequest{}, fmt.Errorf("error opening approval request: %w", err)
	}
	return apr, nil
}

func gateReason(tool *tools.Tool) string {
	if tool.Effect == mt.EffectMoney {
		return "money: this call spends or commits funds"
	}
	return "irreversible: this call cannot be undone once it runs"
}

// recentCalls summarises the session's last calls for the approver.
func (g *Gate) recentCalls(ctx context.Context, inv store.Invocation) (json.RawMessage, error) {
	if inv.SessionID == "" {
		return json.RawMessage(`[]`), nil
	}
	invs, err := g.cfg.Store.InvocationListBySession(ctx, inv.SessionID)
	if err != nil {
		return nil, fmt.Errorf("error reading session context: %w", err)
	}
	type call struct {
		Tool    string             `json:"tool"`
		State   mt.InvocationState `json:"state"`
		Summary string             `json:"summary,omitempty"`
	}
	out := []call{}
	for i := len(invs) - 1; i >= 0 && len(out) < contextCalls; i-- {
		if invs[i].ID == inv.ID {
			continue
		}
		c := call{Tool: invs[i].Tool, State: invs[i].State}
		if invs[i].Observation != nil {
			c.Summary = invs[i].Observation.Summary
		}
		out = append(out, c)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("error encoding session context: %w", err)
	}
	return b, nil
}

func decodeArgs(raw []byte) map[string]any {
	args, err := tools.DecodeArgs(raw)
	if err != nil {
		return nil
	}
	return args
}

// sessionFacts is what a condition sees as "session".
func sessionFacts(sessionID string, facts map[string]string) map[string]any {
	out := make(map[string]any, len(facts)+1)
	for k, v := range facts {
		out[k] = v
	}
	out["id"] = sessionID
	return out
}

// declared marks every fact an agent stated as agent-declared.
func declared(facts map[string]string) map[string]mt.Provenance {
	out := make(map[string]mt.Provenance, len(facts))
	for name := range facts {
		out[name] = mt.ProvenanceAgentDeclared
	}
	return out
}
