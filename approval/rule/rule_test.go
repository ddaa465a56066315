package rule

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConditionApproves(t *testing.T) {
	t.Parallel()
	c, err := Compile(`args.to == session.caller_number`)
	require.NoError(t, err)
	require.Equal(t, `args.to == session.caller_number`, c.String())

	tests := []struct {
		name    string
		args    map[string]any
		session map[string]any
		want    bool
	}{
		{"matching caller", map[string]any{"to": "+15550001111"}, map[string]any{"caller_number": "+15550001111"}, true},
		{"other number", map[string]any{"to": "+15550002222"}, map[string]any{"caller_number": "+15550001111"}, false},
		{"missing session fact fails closed", map[string]any{"to": "+15550001111"}, nil, false},
		{"missing argument fails closed", nil, map[string]any{"caller_number": "+15550001111"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, c.Approves(tt.args, tt.session))
		})
	}
}

func TestConditionComparesExactNumbers(t *testing.T) {
	t.Parallel()
	c, err := Compile(`args.amount_cents < 5000`)
	require.NoError(t, err)
	require.True(t, c.Approves(map[string]any{"amount_cents": json.Number("4999")}, nil))
	require.False(t, c.Approves(map[string]any{"amount_cents": json.Number("5000")}, nil))
}

func TestCompileRefusesBadRules(t *testing.T) {
	t.Parallel()
	_, err := Compile(`args.to ==`)
	require.Error(t, err, "syntax error")
	_, err = Compile(`args.amount_cents + 1`)
	require.ErrorContains(t, err, "not a boolean")
	_, err = Compile(`caller == "x"`)
	require.Error(t, err, "undeclared variable")
}

func TestConditionKnowsWhichFactsItReads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src   string
		reads []string
		not   []string
	}{
		{`args.to == session.caller_number`, []string{"caller_number"}, []string{"tenant_id"}},
		{`has(session.tenant_id) && args.tenant_id == session.tenant_id`, []string{"tenant_id"}, []string{"caller_number"}},
		{`true`, nil, []string{"caller_number"}},
		{`args.to == session["caller_number"]`, []string{"caller_number", "tenant_id"}, nil},
		{`"caller_number" in session`, []string{"caller_number", "tenant_id"}, nil},
		{`args.list.exists(session, session == "x")`, []string{"caller_number"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			t.Parallel()
			c, err := Compile(tt.src)
			require.NoError(t, err)
			for _, name := range tt.reads {
				require.True(t, c.ReadsFact(name), name)
			}
			for _, name := range tt.not {
				require.False(t, c.ReadsFact(name), name)
			}
		})
	}
}
