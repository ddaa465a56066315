package outbox_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// approvedCall records a gated call as admission does, its approval
// request, and an approver's decision; it returns the invocation and the
// wake-up the decision queued.
func approvedCall(t *testing.T, st ledger.Store) (ledger.Invocation, ledger.OutboxSignal) {
	t.Helper()
	ctx := t.Context()
	args := json.RawMessage(`{"body":"Your code is 1234.","to":"+14155550177"}`)
	sum := sha256.Sum256(args)
	hash := hex.EncodeToString(sum[:])
	key := "s1:send_sms:" + hash[:32]
	_, err := st.SessionUpsert(ctx, ledger.Session{ID: "s1", AgentID: "agent_1"})
	require.NoError(t, err)
	inv, _, err := st.InvocationInsert(ctx, ledger.Invocation{
		OperationKey: key, SessionID: "s1", AgentID: "agent_1", Tool: "send_sms", Args: args, ArgsHash: hash,
		Route: mt.RouteGated, State: mt.InvocationAwaitingApproval, WorkflowID: workflows.InvocationWorkflowID(key),
	})
	require.NoError(t, err)
	req, err := st.ApprovalRequestInsert(ctx, ledger.ApprovalRequest{
		InvocationID: inv.ID, OperationKey: key, SessionID: "s1", AgentID: "agent_1", Tool: "send_sms",
		Args: args, ArgsHash: hash, ApproverRole: "manager", Status: ledger.ApprovalPending,
		TimeoutAt: time.Now().Add(10 * time.Minute),
	})
	require.NoError(t, err)
	res, err := st.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
		ApprovalID: req.ID, Decision: ledger.DecisionApprove, Actor: "operator:manager", TokenTTL: time.Hour,
		Signal: &ledger.OutboxSignal{
			WorkflowID: workflows.ApprovalWorkflowID(key, "s1"), SignalName: workflows.SignalApprovalDecided,
			Payload: json.RawMessage(`{"ApprovalID":"` + req.ID + `"}`),
		},
	})
	require.NoError(t, err)
	require.NotNil(t, res.Signal)
	return inv, *res.Signal
}

// Admission lists a gated call's request before it starts the call's
// workflow: a decision in between finds no workflow, and its wake-up is
// delivered once the workflow is there.
func TestAWakeUpWaitsForTheWorkflowOfAnOpenCall(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(*testing.T) ledger.Store{"postgres": ledgertest.Postgres, "sqlite": ledgertest.SQLite} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			ctx := t.Context()
			notYet := serviceerror.NewNotFound("workflow not found for ID: invocation/...")
			rec := &recorder{script: []error{notYet, notYet}}
			relay := newRelay(t, st, rec)
			inv, sig := approvedCall(t, st)

			require.Error(t, relay.Deliver(ctx, sig))
			got, err := st.OutboxGet(ctx, sig.ID)
			require.NoError(t, err)
			require.Nil(t, got.AbandonedAt, "the call is open: its workflow is yet to start")
			require.Eventually(t, func() bool {
				relay.Sweep(ctx)
				got, err := st.OutboxGet(ctx, sig.ID)
				return err == nil && got.DeliveredAt != nil
			}, 10*time.Second, 5*time.Millisecond)
			require.Equal(t, []string{inv.WorkflowID + ` approval-decided {"ApprovalID":"` + sig.ApprovalID + `"}`}, rec.accepted)
		})
	}
}

// Once the call is final nothing is waiting for the wake-up: a workflow
// Temporal does not know is gone, and the signal is abandoned.
func TestAWakeUpForAFinishedCallIsAbandoned(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	ctx := t.Context()
	relay := newRelay(t, st, &recorder{script: []error{serviceerror.NewNotFound("workflow not found")}})
	inv, sig := approvedCall(t, st)
	require.NoError(t, st.InvocationFinish(ctx, inv.ID, mt.InvocationTimedOut, mt.Observation{Status: mt.StatusError}))

	require.Error(t, relay.Deliver(ctx, sig))
	got, err := st.OutboxGet(ctx, sig.ID)
	require.NoError(t, err)
	require.NotNil(t, got.AbandonedAt)
}

// A compensation's wake-up goes to its session's workflow, which the
// session's first call started: not finding it means it is gone.
func TestACompensationsWakeUpToAMissingSessionIsAbandoned(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	ctx := t.Context()
	relay := newRelay(t, st, &recorder{script: []error{serviceerror.NewNotFound("workflow not found")}})
	args := json.RawMessage(`{"refund_id":"re_1"}`)
	req, err := st.ApprovalRequestInsert(ctx, ledger.ApprovalRequest{
		InvocationID: "undo-u1", OperationKey: "undo-u1", SessionID: "s1", AgentID: "agent_1", Tool: "reverse_refund",
		Args: args, ArgsHash: "h", ApproverRole: "manager", Status: ledger.ApprovalPending, TimeoutAt: time.Now().Add(time.Hour),
	})
	require.NoError(t, err)
	res, err := st.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
		ApprovalID: req.ID, Decision: ledger.DecisionApprove, Actor: "operator:manager", TokenTTL: time.Hour,
		Signal: &ledger.OutboxSignal{WorkflowID: workflows.ApprovalWorkflowID("undo-u1", "s1"), SignalName: workflows.SignalApprovalDecided, Payload: json.RawMessage(`{}`)},
	})
	require.NoError(t, err)

	require.Error(t, relay.Deliver(ctx, *res.Signal))
	got, err := st.OutboxGet(ctx, res.Signal.ID)
	require.NoError(t, err)
	require.NotNil(t, got.AbandonedAt)
}
