package admission

import (
	"context"

	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// openApproval opens the approval request of an admitted gated call,
// under the catalog the call was admitted with.
func (g *Gate) openApproval(ctx context.Context, cat *tools.Catalog, tool *tools.Tool, inv ledger.Invocation, sess ledger.Session) (ledger.ApprovalRequest, error) {
	return approval.Open(ctx, g.cfg.Store, inv, decodeArgs(inv.Args), sess, policyOf(cat, tool), g.cfg.Now())
}

// policyOf is the approval policy of a catalog tool; a tool without one
// has an approver-less policy with no condition. An operator's vouch is
// judged by the roles cat gives them now, not when they vouched: an
// operator since demoted or removed vouches for nothing.
// approvalOpener builds a new gated call's approval request, in the
// transaction that records it, as openApproval would.
func (g *Gate) approvalOpener(cat *tools.Catalog, tool *tools.Tool, sess ledger.Session) ledger.ApprovalOpener {
	now := g.cfg.Now()
	return func(inv ledger.Invocation, sessionCalls []ledger.Invocation) (ledger.ApprovalRequest, error) {
		return approval.NewRequest(inv, decodeArgs(inv.Args), sess, policyOf(cat, tool), now, sessionCalls)
	}
}

func policyOf(cat *tools.Catalog, tool *tools.Tool) approval.Policy {
	p := approval.Policy{
		TrustsFact:    tool.Approval.TrustsFact,
		Vouches:       func(operatorID string) bool { return cat.MayVouchFor(tool, operatorID) },
		Effect:        tool.Effect,
		Reversibility: tool.Reversibility,
		RiskTags:      tool.RiskTags,
	}
	if a := tool.Approval; a != nil {
		p.ApproverRole, p.Timeout, p.Condition = a.ApproverRole, a.Timeout, a.Condition
	}
	return p
}

func decodeArgs(raw []byte) map[string]any {
	args, err := tools.DecodeArgs(raw)
	if err != nil {
		return nil
	}
	return args
}

// declared marks every fact an agent stated as agent-declared.
func declared(facts map[string]string) map[string]mt.Provenance {
	out := make(map[string]mt.Provenance, len(facts))
	for name := range facts {
		out[name] = mt.ProvenanceAgentDeclared
	}
	return out
}
