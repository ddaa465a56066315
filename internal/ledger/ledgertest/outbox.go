package ledgertest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

func wakeUp(workflowID string) ledger.OutboxSignal {
	return ledger.OutboxSignal{WorkflowID: workflowID, SignalName: "approval-decided", Payload: json.RawMessage(`{"ApprovalID":"apr_1"}`)}
}

func testOutbox(t *testing.T, setup setupFunc) {
	t.Run("DecisionQueuesItsSignalInTheSameTransaction", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		req := openRequest(t, ctx, s)
		sig := wakeUp("invocation/" + req.OperationKey)
		res, err := s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID: req.ID, Decision: ledger.DecisionApprove, Actor: operator, TokenTTL: time.Hour, Signal: &sig,
		})
		require.NoError(t, err)
		require.NotNil(t, res.Signal)
		require.Equal(t, req.ID, res.Signal.ApprovalID, "an approval's wake-up names it")
		require.Equal(t, sig.WorkflowID, res.Signal.WorkflowID)
		require.JSONEq(t, string(sig.Payload), string(res.Signal.Payload))
		require.Nil(t, res.Signal.DeliveredAt)

		// A refused decision queues nothing.
		_, err = s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID: req.ID, Decision: ledger.DecisionReject, Actor: operator, Signal: &sig,
		})
		require.ErrorIs(t, err, ledger.ErrApprovalNotPending)
		due, err := s.OutboxListDue(ctx, 0)
		require.NoError(t, err)
		require.Len(t, due, 1)
		require.Equal(t, res.Signal.ID, due[0].ID)
	})

	t.Run("FirstEndQueuesTheCallEndedSignal", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		newSession(t, s, "ses_a")
		sig := ledger.OutboxSignal{WorkflowID: "session/ses_a", SignalName: "call-ended", Payload: json.RawMessage(`{"transcript":{"turns":[]}}`)}
		sess, ended, queued, err := s.SessionEndSignalled(ctx, "ses_a", []byte(`{"turns":[]}`), sig)
		require.NoError(t, err)
		require.True(t, ended)
		require.NotNil(t, sess.EndedAt)
		require.NotZero(t, queued.ID)
		require.Equal(t, "call-ended", queued.SignalName)

		_, ended, again, err := s.SessionEndSignalled(ctx, "ses_a", nil, sig)
		require.NoError(t, err)
		require.False(t, ended)
		require.Zero(t, again.ID, "a repeated end queues nothing")
		due, err := s.OutboxListDue(ctx, 0)
		require.NoError(t, err)
		require.Len(t, due, 1)

		_, _, _, err = s.SessionEndSignalled(ctx, "ses_missing", nil, sig)
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})

	t.Run("FailedAttemptsWaitTheirTurnAndSettledSignalsStaySettled", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		a, err := s.OutboxInsert(ctx, wakeUp("invocation/a"))
		require.NoError(t, err)
		b, err := s.OutboxInsert(ctx, wakeUp("invocation/b"))
		require.NoError(t, err)
		c, err := s.OutboxInsert(ctx, wakeUp("invocation/c"))
		require.NoError(t, err)

		require.NoError(t, s.OutboxMarkFailed(ctx, a.ID, "frontend unavailable", time.Hour))
		require.NoError(t, s.OutboxMarkDelivered(ctx, b.ID))
		require.NoError(t, s.OutboxMarkAbandoned(ctx, c.ID, "workflow not found"))
		due, err := s.OutboxListDue(ctx, 0)
		require.NoError(t, err)
		require.Empty(t, due, "a failed signal waits for its next attempt; settled ones are done")

		got, err := s.OutboxGet(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, 1, got.Attempts)
		require.Equal(t, "frontend unavailable", got.LastError)
		require.True(t, got.NextAttemptAt.After(time.Now().Add(50*time.Minute)))

		require.NoError(t, s.OutboxMarkFailed(ctx, a.ID, "still down", 0))
		due, err = s.OutboxListDue(ctx, 0)
		require.NoError(t, err)
		require.Len(t, due, 1)
		require.Equal(t, 2, due[0].Attempts)

		// Settled rows do not move again: a racing relay's late update is a
		// no-op.
		require.NoError(t, s.OutboxMarkFailed(ctx, b.ID, "late", 0))
		require.NoError(t, s.OutboxMarkAbandoned(ctx, b.ID, "late"))
		got, err = s.OutboxGet(ctx, b.ID)
		require.NoError(t, err)
		require.NotNil(t, got.DeliveredAt)
		require.Nil(t, got.AbandonedAt)
		require.Equal(t, 1, got.Attempts)
		got, err = s.OutboxGet(ctx, c.ID)
		require.NoError(t, err)
		require.NotNil(t, got.AbandonedAt)
		require.Equal(t, "workflow not found", got.LastError)
	})

	t.Run("RefusesBadInput", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		_, err := s.OutboxInsert(ctx, ledger.OutboxSignal{SignalName: "x", Payload: json.RawMessage(`{}`)})
		require.ErrorContains(t, err, "workflow ID is required")
		_, err = s.OutboxInsert(ctx, ledger.OutboxSignal{WorkflowID: "w", Payload: json.RawMessage(`{}`)})
		require.ErrorContains(t, err, "signal name is required")
		_, err = s.OutboxInsert(ctx, ledger.OutboxSignal{WorkflowID: "w", SignalName: "x"})
		require.ErrorContains(t, err, "payload is required")
		require.ErrorContains(t, s.OutboxMarkFailed(ctx, 1, "x", -time.Second), "negative retry delay")
		require.ErrorContains(t, s.OutboxMarkAbandoned(ctx, 1, ""), "reason is required")
		_, err = s.OutboxGet(ctx, 424242)
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}
