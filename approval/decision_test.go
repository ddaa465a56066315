package approval

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

type roles []string

func (r roles) HasRole(role string) bool {
	for _, x := range r {
		if x == role {
			return true
		}
	}
	return false
}

type schemaFunc func(json.RawMessage) error

func (f schemaFunc) ValidateArgs(args json.RawMessage) error { return f(args) }

func TestCheckDecision(t *testing.T) {
	t.Parallel()
	req := ledger.ApprovalRequest{ID: "apr_1", Tool: "refund", ApproverRole: "manager"}
	valid := schemaFunc(func(json.RawMessage) error { return nil })
	invalid := schemaFunc(func(json.RawMessage) error { return errors.New("amount: too large") })

	tests := []struct {
		name   string
		req    ledger.ApprovalRequest
		d      Decision
		schema Schema
		rule   Refused
		audit  bool
	}{
		{"approver approves", req, Decision{Kind: ledger.DecisionApprove, Approver: roles{"manager"}}, valid, 0, false},
		{"wrong role", req, Decision{Kind: ledger.DecisionApprove, Approver: roles{"agent"}}, valid, RefusedNotApprover, true},
		{"no role on the request", ledger.ApprovalRequest{ID: "apr_2"}, Decision{Kind: ledger.DecisionApprove, Approver: roles{""}}, valid, RefusedNotApprover, true},
		{"args on a reject", req, Decision{Kind: ledger.DecisionReject, Approver: roles{"manager"}, Args: json.RawMessage(`{}`)}, valid, RefusedArgsUnexpected, false},
		{"modify without args", req, Decision{Kind: ledger.DecisionModify, Approver: roles{"manager"}}, valid, RefusedArgsMissing, true},
		{"modify, tool gone", req, Decision{Kind: ledger.DecisionModify, Approver: roles{"manager"}, Args: json.RawMessage(`{"a":1}`)}, nil, RefusedArgsUncheckable, false},
		{"modify, schema refuses", req, Decision{Kind: ledger.DecisionModify, Approver: roles{"manager"}, Args: json.RawMessage(`{"a":1}`)}, invalid, RefusedArgsInvalid, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := CheckDecision(tt.req, tt.d, tt.schema)
			if tt.rule == 0 {
				require.NoError(t, err)
				return
			}
			var de *DecisionError
			require.ErrorAs(t, err, &de)
			require.Equal(t, tt.rule, de.Rule)
			require.Equal(t, tt.audit, de.Audit != "")
		})
	}
}

func TestCheckDecisionModifyFreezesArgs(t *testing.T) {
	t.Parallel()
	req := ledger.ApprovalRequest{ID: "apr_1", Tool: "refund", ApproverRole: "manager"}
	args, hash, err := CheckDecision(req, Decision{Kind: ledger.DecisionModify, Approver: roles{"manager"}, Args: json.RawMessage(`{ "b": 2, "a": 1 }`)},
		schemaFunc(func(json.RawMessage) error { return nil }))
	require.NoError(t, err)
	want, wantHash, err := Canonicalize([]byte(`{"a":1,"b":2}`))
	require.NoError(t, err)
	require.Equal(t, string(want), string(args))
	require.Equal(t, wantHash, hash)
}
