package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/approval/rule"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// contextCalls is how many of the session's recent calls an approver sees.
const contextCalls = 5

// Policy is a gated tool's approval policy, with what an approver is shown
// of the tool. The catalog's tool carries it; it is copied here so this
// package need not import the catalog, which imports this package.
type Policy struct {
	// ApproverRole is the operator role that may decide.
	ApproverRole string
	// Timeout bounds the wait for a decision.
	Timeout time.Duration
	// Condition pre-approves a call without a human; nil when unset.
	Condition *rule.Condition
	// TrustsFact reports whether Condition may rest on a fact of a
	// provenance.
	TrustsFact func(mt.Provenance) bool
	// Vouches reports whether the operator with this ID, as the current
	// catalog has them, may vouch for the facts Condition rests on: an
	// operator's fact is an approval in disguise, so it counts only from
	// someone holding the authority it grants. Optional: default nil, and
	// no operator's fact counts.
	Vouches func(operatorID string) bool

	Effect        mt.Effect
	Reversibility mt.Reversibility
	RiskTags      []string
}

// Requests is the part of the ledger that opens approval requests.
type Requests interface {
	InvocationListBySession(ctx context.Context, sessionID string) ([]ledger.Invocation, error)
	ApprovalRequestInsert(ctx context.Context, a ledger.ApprovalRequest) (ledger.ApprovalRequest, error)
}

// Open freezes a gated call in an approval request, before its workflow
// starts, so the agent's answer already names a request an approver can
// find. args are the call's arguments as a condition reads them.
func Open(ctx context.Context, store Requests, inv ledger.Invocation, args map[string]any, sess ledger.Session, policy Policy, now time.Time) (ledger.ApprovalRequest, error) {
	var calls []ledger.Invocation
	if inv.SessionID != "" {
		var err error
		if calls, err = store.InvocationListBySession(ctx, inv.SessionID); err != nil {
			return ledger.ApprovalRequest{}, fmt.Errorf("error reading session context: %w", err)
		}
	}
	req, err := NewRequest(inv, args, sess, policy, now, calls)
	if err != nil {
		return ledger.ApprovalRequest{}, err
	}
	apr, err := store.ApprovalRequestInsert(ctx, req)
	if err != nil {
		return ledger.ApprovalRequest{}, fmt.Errorf("error opening approval request: %w", err)
	}
	return apr, nil
}

// NewRequest is the approval request Open inserts, built from the
// session's calls in the order they were made (sessionCalls), so the
// caller may insert it in the transaction that records the call.
func NewRequest(inv ledger.Invocation, args map[string]any, sess ledger.Session, policy Policy, now time.Time, sessionCalls []ledger.Invocation) (ledger.ApprovalRequest, error) {
	recent, err := recentCalls(inv, sessionCalls)
	if err != nil {
		return ledger.ApprovalRequest{}, err
	}
	now = now.UTC()
	req := ledger.ApprovalRequest{
		InvocationID:  inv.ID,
		OperationKey:  inv.OperationKey,
		SessionID:     inv.SessionID,
		AgentID:       inv.AgentID,
		Tool:          inv.Tool,
		Args:          inv.Args,
		ArgsHash:      inv.ArgsHash,
		ApproverRole:  policy.ApproverRole,
		Reason:        gateReason(policy.Effect),
		RiskTags:      policy.RiskTags,
		Effect:        policy.Effect,
		Reversibility: policy.Reversibility,
		Context:       recent,
		Status:        ledger.ApprovalPending,
		TimeoutAt:     now.Add(policy.Timeout),
	}
	// A rule may pre-approve a non-money call; the decision is recorded
	// with the rule as its actor. The loader refuses rules on money tools.
	// The rule sees only the facts whose source it trusts: a fact the agent
	// merely stated is absent, so a rule reading it does not fire and the
	// call goes to a human.
	// A fact an operator vouched for is seen only if that operator may
	// vouch for this tool's facts.
	if policy.Condition != nil && policy.Effect != mt.EffectMoney {
		shown := sess.FactsTrusted(policy.countsFact)
		if policy.Condition.Approves(args, sessionFacts(inv.SessionID, shown)) {
			req.Status = ledger.ApprovalAutoApproved
			req.DecidedBy = "rule:" + policy.Condition.String()
			req.DecidedAt = &now
			if req.DecisionDetail, err = restedOn(sess, shown, policy.Condition); err != nil {
				return ledger.ApprovalRequest{}, err
			}
		}
	}
	return req, nil
}

func gateReason(effect mt.Effect) string {
	if effect == mt.EffectMoney {
		return "money: this call spends or commits funds"
	}
	return "irreversible: this call cannot be undone once it runs"
}

// recentCalls summarises the session's last calls for the approver.
func recentCalls(inv ledger.Invocation, invs []ledger.Invocation) (json.RawMessage, error) {
	if inv.SessionID == "" {
		return json.RawMessage(`[]`), nil
	}
	type call struct {
		Tool    string             `json:"tool"`
		State   mt.InvocationState `json:"state"`
		Summary string             `json:"summary,omitempty"`
		// Wording is what the agent was given to say, which is what the
		// person on the call heard.
		Wording string `json:"wording,omitempty"`
	}
	out := []call{}
	for i := len(invs) - 1; i >= 0 && len(out) < contextCalls; i-- {
		if invs[i].ID == inv.ID {
			continue
		}
		c := call{Tool: invs[i].Tool, State: invs[i].State}
		if invs[i].Observation != nil {
			c.Summary, c.Wording = invs[i].Observation.Summary, invs[i].Observation.Wording
		}
		out = append(out, c)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("error encoding session context: %w", err)
	}
	return b, nil
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
