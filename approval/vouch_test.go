package approval

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/approval/rule"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// insertOnly records the request Open inserts.
type insertOnly struct{ got ledger.ApprovalRequest }

func (s *insertOnly) InvocationListBySession(context.Context, string) ([]ledger.Invocation, error) {
	return nil, nil
}

func (s *insertOnly) ApprovalRequestInsert(_ context.Context, a ledger.ApprovalRequest) (ledger.ApprovalRequest, error) {
	s.got = a
	return a, nil
}

// textPolicy is a manager-gated text the rule approves to the caller's
// own number, trusting operators and Twilio, where only the named
// operators may vouch.
func textPolicy(t *testing.T, mayVouch ...string) Policy {
	t.Helper()
	c, err := rule.Compile(`args.to == session.caller_number`)
	require.NoError(t, err)
	return Policy{
		ApproverRole: "manager", Timeout: time.Minute, Condition: c,
		TrustsFact: func(p mt.Provenance) bool {
			return p.Kind() == mt.ProvenanceOperator || p == "platform-signed:twilio"
		},
		Vouches: func(id string) bool {
			for _, v := range mayVouch {
				if v == id {
					return true
				}
			}
			return false
		},
		Effect: mt.EffectWrite, Reversibility: mt.ReversibilityIrreversible,
	}
}

func sessionWith(facts map[string]mt.Fact) ledger.Session {
	s := ledger.Session{ID: "call-1", Facts: map[string]string{}, Provenance: map[string]mt.Provenance{}}
	for name, f := range facts {
		s.Facts[name], s.Provenance[name] = f.Value, f.Provenance
	}
	return s
}

func TestOpenCountsAVouchOnlyFromWhoeverHoldsTheAuthority(t *testing.T) {
	t.Parallel()
	const number = "+14155550177"
	inv := ledger.Invocation{ID: "inv_1", OperationKey: "k", SessionID: "call-1", AgentID: "voice-agent", Tool: "send_sms"}
	args := map[string]any{"to": number}
	tests := []struct {
		name       string
		provenance mt.Provenance
		decided    bool
	}{
		{"the manager's vouch", "operator:demo-manager", true},
		{"an ops clerk's vouch", "operator:night-clerk", false},
		{"an operator the catalog no longer has", "operator:gone", false},
		{"a vouch naming nobody", mt.ProvenanceOperator, false},
		{"the agent's own word", mt.ProvenanceAgentDeclared, false},
		{"a signed fact", "platform-signed:twilio", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := &insertOnly{}
			sess := sessionWith(map[string]mt.Fact{
				"caller_number": {Value: number, Provenance: tt.provenance},
				"tenant_id":     {Value: "t_100", Provenance: "operator:night-clerk"},
			})
			got, err := Open(t.Context(), store, inv, args, sess, textPolicy(t, "demo-manager"), time.Now())
			require.NoError(t, err)
			if !tt.decided {
				require.Equal(t, ledger.ApprovalPending, got.Status, "the call waits for a human")
				require.Empty(t, got.DecidedBy)
				require.Nil(t, got.DecisionDetail)
				return
			}
			require.Equal(t, ledger.ApprovalAutoApproved, got.Status)
			require.Equal(t, "rule:args.to == session.caller_number", got.DecidedBy)
			var detail apitype.RestedOn
			require.NoError(t, json.Unmarshal(got.DecisionDetail, &detail))
			require.Equal(t, []apitype.RestedFact{{Fact: "caller_number", Value: number, Provenance: tt.provenance}}, detail.Facts,
				"only the fact the rule reads, with whose word it is")
		})
	}
}

func TestOpenWithoutAVoucherListCountsNoOperator(t *testing.T) {
	t.Parallel()
	p := textPolicy(t)
	p.Vouches = nil
	store := &insertOnly{}
	sess := sessionWith(map[string]mt.Fact{"caller_number": {Value: "+14155550177", Provenance: "operator:demo-manager"}})
	got, err := Open(t.Context(), store, ledger.Invocation{ID: "inv_1", OperationKey: "k", SessionID: "call-1"},
		map[string]any{"to": "+14155550177"}, sess, p, time.Now())
	require.NoError(t, err)
	require.Equal(t, ledger.ApprovalPending, got.Status)
}
