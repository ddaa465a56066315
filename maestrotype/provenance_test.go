package maestrotype

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseProvenanceNamesTheVouchingOperator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		kind     Provenance
		operator string
		platform string
	}{
		{"agent-declared", ProvenanceAgentDeclared, "", ""},
		{"operator", ProvenanceOperator, "", ""},
		{"operator:demo-manager", ProvenanceOperator, "demo-manager", ""},
		{"operator:ops:night", ProvenanceOperator, "ops:night", ""},
		{"platform-signed:twilio", "platform-signed:twilio", "", "twilio"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			p, err := ParseProvenance(tt.in)
			require.NoError(t, err)
			require.Equal(t, Provenance(tt.in), p)
			require.Equal(t, tt.kind, p.Kind())
			require.Equal(t, tt.operator, p.Operator())
			require.Equal(t, tt.platform, p.Platform())
		})
	}
}

func TestParseProvenanceRefusesMalformedOperators(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"operator:", "operator:a\nb", "operator:" + strings.Repeat("x", 201), "operators"} {
		_, err := ParseProvenance(in)
		require.Error(t, err, in)
	}
}

func TestDefaultTrustedProvenancesTrustEveryOperatorKind(t *testing.T) {
	t.Parallel()
	named, err := OperatorVouched("demo-manager")
	require.NoError(t, err)
	require.True(t, DefaultTrustedProvenances(named))
	require.True(t, DefaultTrustedProvenances(ProvenanceOperator))
	require.True(t, DefaultTrustedProvenances("platform-signed:twilio"))
	require.False(t, DefaultTrustedProvenances(ProvenanceAgentDeclared))
}
