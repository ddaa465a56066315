package ledgertest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

func testInvocationAdmit(t *testing.T, setup setupFunc) {
	gated := func(sessionID string) ledger.Invocation {
		inv := newInvocation(sessionID)
		inv.AgentID = "agent_admit_" + inv.OperationKey
		inv.Route, inv.State = maestrotype.RouteGated, maestrotype.InvocationAwaitingApproval
		return inv
	}
	// opener opens a rule-approved request for the call, recording the
	// session's calls it was shown.
	opener := func(seen *[]ledger.Invocation) ledger.ApprovalOpener {
		return func(inv ledger.Invocation, calls []ledger.Invocation) (ledger.ApprovalRequest, error) {
			*seen = calls
			a := newApprovalRequest(soon())
			a.InvocationID, a.OperationKey, a.SessionID, a.AgentID = inv.ID, inv.OperationKey, inv.SessionID, inv.AgentID
			now := soon()
			a.Status, a.DecidedBy, a.DecidedAt = ledger.ApprovalAutoApproved, "rule:amount < 10", &now
			return a, nil
		}
	}

	t.Run("OpensTheRequestWithTheCall", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		first := newInvocation("ses_admit")
		_, _, err := s.InvocationInsert(ctx, first)
		require.NoError(t, err)

		var seen []ledger.Invocation
		inv := gated("ses_admit")
		got, err := s.InvocationAdmit(ctx, inv, 2, opener(&seen))
		require.NoError(t, err)
		require.True(t, got.Created)
		require.Equal(t, inv.OperationKey, got.Invocation.OperationKey)
		require.NotNil(t, got.Approval)
		require.Equal(t, got.Invocation.ID, got.Approval.InvocationID)
		require.Len(t, seen, 2, "the opener sees the session's calls, the new one among them")

		events, err := s.ApprovalEventList(ctx, got.Approval.ID)
		require.NoError(t, err)
		require.Len(t, events, 2, "requested, then the rule's decision")
		stored, err := s.ApprovalRequestGetByKey(ctx, inv.OperationKey)
		require.NoError(t, err)
		require.Equal(t, got.Approval.ID, stored.ID)

		// The same key again is answered with its row and opens nothing.
		again, err := s.InvocationAdmit(ctx, inv, 2, func(ledger.Invocation, []ledger.Invocation) (ledger.ApprovalRequest, error) {
			return ledger.ApprovalRequest{}, errors.New("a re-sent key opens nothing")
		})
		require.NoError(t, err)
		require.False(t, again.Created)
		require.Nil(t, again.Approval)
		require.Equal(t, got.Invocation.ID, again.Invocation.ID)
	})

	t.Run("AFailedOpenRecordsNoCall", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		inv := gated("ses_admit_fail")
		_, err := s.InvocationAdmit(ctx, inv, 0, func(ledger.Invocation, []ledger.Invocation) (ledger.ApprovalRequest, error) {
			return ledger.ApprovalRequest{}, errors.New("no request")
		})
		require.Error(t, err)
		_, err = s.InvocationGetByKey(ctx, inv.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound, "a gated call is never recorded without its request")
	})

	t.Run("HoldsTheCapAndAnswersAKeyPastIt", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		held := gated("ses_admit_cap")
		got, err := s.InvocationAdmit(ctx, held, 1, nil)
		require.NoError(t, err)
		require.True(t, got.Created)

		next := gated("ses_admit_cap")
		next.AgentID = held.AgentID
		_, err = s.InvocationAdmit(ctx, next, 1, nil)
		var capErr *ledger.CapError
		require.ErrorAs(t, err, &capErr)
		require.Equal(t, 1, capErr.Held)
		_, err = s.InvocationGetByKey(ctx, next.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound)

		again, err := s.InvocationAdmit(ctx, held, 1, nil)
		require.NoError(t, err, "a call re-sent under its key is answered whatever the count")
		require.False(t, again.Created)
		require.Equal(t, got.Invocation.ID, again.Invocation.ID)
	})

	t.Run("InsertInSessionHoldsTheSessionToTheChecks", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		session := func(id string) {
			_, err := s.SessionUpsert(ctx, ledger.Session{ID: id, AgentID: "agent_1"})
			require.NoError(t, err)
		}
		session("ses_in_active")
		inv := newInvocation("ses_in_active")
		got, ok, err := s.InvocationInsertInSession(ctx, inv)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, inv.OperationKey, got.OperationKey)
		require.Equal(t, "ses_in_active", got.SessionID)
		require.JSONEq(t, string(inv.Args), string(got.Args))

		_, ok, err = s.InvocationInsertInSession(ctx, inv)
		require.NoError(t, err)
		require.False(t, ok, "a key taken inserts nothing")

		other := newInvocation("ses_in_active")
		other.AgentID = "agent_2"
		_, ok, err = s.InvocationInsertInSession(ctx, other)
		require.NoError(t, err)
		require.False(t, ok, "another agent's session")

		_, ok, err = s.InvocationInsertInSession(ctx, newInvocation("ses_in_missing"))
		require.NoError(t, err)
		require.False(t, ok, "a session not recorded")

		session("ses_in_halted")
		_, err = s.SessionHalt(ctx, "ses_in_halted", "step", "why")
		require.NoError(t, err)
		session("ses_in_rollback")
		_, err = s.SessionRollbackBegin(ctx, "ses_in_rollback")
		require.NoError(t, err)
		session("ses_in_ended")
		_, _, err = s.SessionEnd(ctx, "ses_in_ended", nil)
		require.NoError(t, err)
		for _, id := range []string{"ses_in_halted", "ses_in_rollback", "ses_in_ended"} {
			inv := newInvocation(id)
			_, ok, err := s.InvocationInsertInSession(ctx, inv)
			require.NoError(t, err)
			require.False(t, ok, id)
			_, err = s.InvocationGetByKey(ctx, inv.OperationKey)
			require.ErrorIs(t, err, ledger.ErrNotFound, id)
		}
	})

	t.Run("CapHoldsUnderABurst", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		const limit, tries = 3, 10
		agent := gated("ses_admit_burst").AgentID
		results := make([]ledger.Admission, tries)
		errs := burst(tries, func(i int) error {
			inv := gated("ses_admit_burst")
			inv.AgentID = agent
			var err error
			var mine []ledger.Invocation
			results[i], err = s.InvocationAdmit(ctx, inv, limit, func(inv ledger.Invocation, calls []ledger.Invocation) (ledger.ApprovalRequest, error) {
				a, err := opener(&mine)(inv, calls)
				a.Status, a.DecidedBy, a.DecidedAt = ledger.ApprovalPending, "", nil
				return a, err
			})
			return err
		})
		created := 0
		for i, err := range errs {
			if err != nil {
				require.ErrorIs(t, err, ledger.ErrCapReached)
				continue
			}
			require.True(t, results[i].Created)
			require.NotNil(t, results[i].Approval)
			created++
		}
		require.Equal(t, limit, created, "exactly the cap's worth recorded, each with its pending request")
	})

	t.Run("InSessionReadsTheSessionFirstAndRecordsNothingItRefuses", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		inv := gated("ses_admit_in")
		_, err := s.InvocationAdmitInSession(ctx, inv, 2, func(ledger.SessionAtAdmission) error { return nil }, nil)
		require.ErrorIs(t, err, ledger.ErrNotFound, "a session not recorded")
		_, err = s.InvocationGetByKey(ctx, inv.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound)

		_, err = s.SessionUpsert(ctx, ledger.Session{ID: "ses_admit_in", AgentID: inv.AgentID, Facts: map[string]string{"tier": "gold"}})
		require.NoError(t, err)
		refused := errors.New("refused")
		_, err = s.InvocationAdmitInSession(ctx, inv, 2, func(ledger.SessionAtAdmission) error { return refused }, nil)
		require.ErrorIs(t, err, refused)
		_, err = s.InvocationGetByKey(ctx, inv.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound, "a refused call is not recorded")

		var checked ledger.SessionAtAdmission
		var seen []ledger.Invocation
		got, err := s.InvocationAdmitInSession(ctx, inv, 2, func(sess ledger.SessionAtAdmission) error {
			checked = sess
			return nil
		}, opener(&seen))
		require.NoError(t, err)
		require.True(t, got.Created)
		require.NotNil(t, got.Approval)
		require.Equal(t, "gold", checked.Facts["tier"], "the check sees the session's row")
		require.Len(t, seen, 1)
		require.False(t, checked.ApprovalPending, "no request of the session was pending")

		// A request left pending is seen by the next call's check.
		_, err = s.InvocationAdmitInSession(ctx, gated("ses_admit_in"), 2, func(ledger.SessionAtAdmission) error { return nil },
			func(inv ledger.Invocation, calls []ledger.Invocation) (ledger.ApprovalRequest, error) {
				a, err := opener(&seen)(inv, calls)
				a.Status, a.DecidedBy, a.DecidedAt = ledger.ApprovalPending, "", nil
				return a, err
			})
		require.NoError(t, err)
		_, err = s.InvocationAdmitInSession(ctx, gated("ses_admit_in"), 2, func(sess ledger.SessionAtAdmission) error {
			checked = sess
			return nil
		}, nil)
		require.NoError(t, err)
		require.True(t, checked.ApprovalPending, "the session's pending request is seen")
	})
}
