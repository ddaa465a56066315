package ledgertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

func testMetricCounts(t *testing.T, setup setupFunc) {
	t.Run("Empty", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		got, err := s.MetricCounts(ctx)
		require.NoError(t, err)
		require.Empty(t, got.Invocations)
		require.Empty(t, got.Refusals)
		require.Zero(t, got.ApprovalsPending)
		require.True(t, got.OldestPendingApproval.IsZero())
		require.Equal(t, map[string]int64{"effect": 0, "post_call": 0, "signal": 0}, got.ReconciliationsOpen)
		require.Empty(t, got.Compensations)
		require.Zero(t, got.SessionsRolledBack)
	})

	t.Run("GroupsWhatTheLedgerHolds", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		for range 2 {
			inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_a"))
			require.NoError(t, err)
			require.NoError(t, s.InvocationFinish(ctx, inv.ID, maestrotype.InvocationSucceeded, maestrotype.Observation{Status: maestrotype.StatusSuccess}))
		}
		_, _, err := s.InvocationInsert(ctx, newInvocation("ses_b"))
		require.NoError(t, err)
		for _, code := range []maestrotype.Code{maestrotype.CodeUnknownTool, maestrotype.CodeInvalidArgs, maestrotype.CodeInvalidArgs} {
			require.NoError(t, s.RefusalInsert(ctx, ledger.Refusal{Tool: "sms.send", Code: code}))
		}
		first, err := s.ApprovalRequestInsert(ctx, newApprovalRequest(time.Now().Add(time.Hour)))
		require.NoError(t, err)
		_, err = s.ApprovalRequestInsert(ctx, newApprovalRequest(time.Now().Add(time.Hour)))
		require.NoError(t, err)

		got, err := s.MetricCounts(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, []ledger.InvocationCount{
			{Tool: "sms.send", Route: string(maestrotype.RouteCompensable), State: string(maestrotype.InvocationSucceeded), Count: 2},
			{Tool: "sms.send", Route: string(maestrotype.RouteCompensable), State: string(maestrotype.InvocationRunning), Count: 1},
		}, got.Invocations)
		require.Equal(t, map[string]int64{string(maestrotype.CodeUnknownTool): 1, string(maestrotype.CodeInvalidArgs): 2}, got.Refusals)
		require.Equal(t, int64(2), got.ApprovalsPending)
		require.Equal(t, first.CreatedAt, got.OldestPendingApproval, "the oldest request")
	})
}
