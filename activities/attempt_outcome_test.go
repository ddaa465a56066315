package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// What an invocation's outcome proves decides the delivery chain's next
// step: only a receipt delivers, only "nothing was done" repeats the
// channel, an unknown outcome is reconciled, and the rest moves on.
func TestAttemptOutcomeReadsWhatTheInvocationProves(t *testing.T) {
	t.Parallel()
	receipt := &mt.Receipt{Provider: "ses", ID: "m1"}
	cases := []struct {
		name  string
		state mt.InvocationState
		obs   mt.Observation
		want  workflows.AttemptOutcome
	}{
		{"a receipt", mt.InvocationSucceeded, mt.Observation{Receipt: receipt}, workflows.AttemptDelivered},
		{"success without a receipt proves nothing delivered", mt.InvocationSucceeded, mt.Observation{}, workflows.AttemptRefused},
		{"held for reconciliation", mt.InvocationNeedsReconciliation, mt.Observation{Code: mt.CodeOutcomeUnknown}, workflows.AttemptUnknown},
		{"unreachable, nothing done", mt.InvocationFailed, mt.Observation{Code: mt.CodeProviderUnavailable}, workflows.AttemptUnavailable},
		{"a 4xx refusal", mt.InvocationFailed, mt.Observation{Code: mt.CodeProviderRejected}, workflows.AttemptRefused},
		{"maestro's configuration", mt.InvocationFailed, mt.Observation{Code: mt.CodeMisconfigured}, workflows.AttemptRefused},
		{"a failure status", mt.InvocationFailed, mt.Observation{Code: mt.CodeNotDelivered}, workflows.AttemptRefused},
		{"an approval rejected", mt.InvocationRejected, mt.Observation{Code: mt.CodeApprovalRejected}, workflows.AttemptRefused},
	}
	for _, c := range cases {
		got, _, r := attemptOutcome(c.state, c.obs)
		require.Equal(t, c.want, got, c.name)
		require.Equal(t, got == workflows.AttemptDelivered, r != nil, "%s: a receipt only with a delivery", c.name)
	}
}
