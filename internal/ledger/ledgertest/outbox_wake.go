package ledgertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

// testOutboxWake covers a decision that wakes its workflow before it
// commits: the delivery is recorded by the decision's own outbox row, and a
// woken reader never sees the request pending.
func testOutboxWake(t *testing.T, setup setupFunc) {
	t.Run("WakeBeforeCommitIsRecordedDeliveredAndReadDecided", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		req := openRequest(t, ctx, s)
		sig := wakeUp("invocation/" + req.OperationKey)
		type read struct {
			req ledger.ApprovalRequest
			err error
		}
		woken := make(chan read, 1)
		res, err := s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID: req.ID, Decision: ledger.DecisionApprove, Actor: operator, TokenTTL: time.Hour, Signal: &sig,
			Wake: func(context.Context, ledger.OutboxSignal) error {
				// The woken workflow reads at once, while the decision is
				// still open.
				go func() {
					got, err := s.ApprovalRequestGetDecided(ctx, req.ID)
					woken <- read{got, err}
				}()
				select {
				case r := <-woken:
					return errors.Join(errors.New("read the request before the decision committed"), r.err)
				case <-time.After(100 * time.Millisecond):
				}
				return nil
			},
			ReadBack: true,
		})
		require.NoError(t, err)
		r := <-woken
		require.NoError(t, r.err)
		require.Equal(t, ledger.ApprovalApproved, r.req.Status, "a woken reader waits for the decision")

		require.NotNil(t, res.Signal)
		require.NotNil(t, res.Signal.DeliveredAt, "the decision's own row records the delivery")
		require.Equal(t, 1, res.Signal.Attempts)
		require.NoError(t, res.WakeErr)
		due, err := s.OutboxListDue(ctx, 0)
		require.NoError(t, err)
		require.Empty(t, due)

		kinds := make([]ledger.ApprovalEventKind, 0, len(res.Events))
		for _, e := range res.Events {
			kinds = append(kinds, e.Kind)
		}
		require.Contains(t, kinds, ledger.ApprovalEventApproved, "events are read back with the decision")
		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Len(t, res.Events, len(events))
	})

	t.Run("FailedWakeLeavesTheSignalOwed", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		req := openRequest(t, ctx, s)
		sig := wakeUp("invocation/" + req.OperationKey)
		unavailable := errors.New("frontend unavailable")
		res, err := s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID: req.ID, Decision: ledger.DecisionReject, Actor: operator, Signal: &sig,
			Wake: func(context.Context, ledger.OutboxSignal) error { return unavailable },
		})
		require.NoError(t, err)
		require.ErrorIs(t, res.WakeErr, unavailable)
		require.Nil(t, res.Signal.DeliveredAt)
		require.Zero(t, res.Signal.Attempts)
		due, err := s.OutboxListDue(ctx, 0)
		require.NoError(t, err)
		require.Len(t, due, 1)
		require.Equal(t, res.Signal.ID, due[0].ID)
	})

	t.Run("RefusedCheckDecidesAndWakesNothing", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		req := openRequest(t, ctx, s)
		sig := wakeUp("invocation/" + req.OperationKey)
		notApprover := errors.New("not the approver")
		_, err := s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID: req.ID, Decision: ledger.DecisionApprove, Actor: operator, TokenTTL: time.Hour, Signal: &sig,
			Check: func(locked ledger.ApprovalRequest) error {
				require.Equal(t, req.ID, locked.ID)
				return notApprover
			},
			Wake: func(context.Context, ledger.OutboxSignal) error {
				t.Error("a refused decision woke its workflow")
				return nil
			},
		})
		require.ErrorIs(t, err, notApprover)
		got, err := s.ApprovalRequestGet(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.ApprovalPending, got.Status)
		due, err := s.OutboxListDue(ctx, 0)
		require.NoError(t, err)
		require.Empty(t, due)
	})

	t.Run("InvocationIsReadWithItsApprovalRequest", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_a"))
		require.NoError(t, err)
		got, approvalID, err := s.InvocationGetWithApproval(ctx, inv.ID)
		require.NoError(t, err)
		require.Equal(t, inv.ID, got.ID)
		require.Empty(t, approvalID, "no request yet")

		a := newApprovalRequest(soon())
		a.InvocationID, a.OperationKey = inv.ID, inv.OperationKey
		req, err := s.ApprovalRequestInsert(ctx, a)
		require.NoError(t, err)
		_, approvalID, err = s.InvocationGetWithApproval(ctx, inv.ID)
		require.NoError(t, err)
		require.Equal(t, req.ID, approvalID)

		_, _, err = s.InvocationGetWithApproval(ctx, "inv_missing")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}
