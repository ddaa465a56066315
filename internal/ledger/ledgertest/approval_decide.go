package ledgertest

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

func testApprovalDecide(t *testing.T, setup setupFunc) {
	t.Run("PendingBySessionListsOnlyUndecidedRequestsOfTheSession", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		pending := openRequest(t, ctx, s)
		decided := openRequest(t, ctx, s)
		approve(t, ctx, s, decided.ID, time.Minute)
		insertRuleApproved(t, ctx, s)
		other := newApprovalRequest(soon())
		other.SessionID = "ses_other"
		_, err := s.ApprovalRequestInsert(ctx, other)
		require.NoError(t, err)

		got, err := s.ApprovalRequestListPendingBySession(ctx, pending.SessionID)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, pending.ID, got[0].ID)
		none, err := s.ApprovalRequestListPendingBySession(ctx, "ses_none")
		require.NoError(t, err)
		require.Empty(t, none)
	})
	t.Run("ApproveMintsATokenBoundToTheArgs", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		res, err := s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID: req.ID,
			Decision:   ledger.DecisionApprove,
			Actor:      operator,
			Reason:     "customer verified on the call",
			TokenTTL:   5 * time.Minute,
		})
		require.NoError(t, err)

		got := res.Request
		require.Equal(t, ledger.ApprovalApproved, got.Status)
		require.Equal(t, operator, got.DecidedBy)
		require.NotNil(t, got.DecidedAt)
		requireRecent(t, *got.DecidedAt)
		require.Equal(t, string(oddArgs), string(got.Args), "approval leaves the frozen args alone")
		require.Equal(t, req.ArgsHash, got.ArgsHash)
		stored, err := s.ApprovalRequestGet(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, got, stored)

		tok := res.Token
		require.NotNil(t, tok)
		require.Regexp(t, `^tok_[0-9a-f]{32}$`, tok.ID)
		require.Equal(t, req.ID, tok.ApprovalID)
		require.Equal(t, req.ArgsHash, tok.ArgsHash)
		require.Nil(t, tok.UsedAt)
		require.Empty(t, tok.UsedBy)
		requireRecent(t, tok.CreatedAt)
		require.WithinDuration(t, tok.CreatedAt.Add(5*time.Minute), tok.ExpiresAt, time.Second)

		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, []ledger.ApprovalEventKind{
			ledger.ApprovalEventRequested, ledger.ApprovalEventApproved, ledger.ApprovalEventTokenMinted,
		}, kindsOf(events))
		approved, minted := events[1], events[2]
		require.Equal(t, operator, approved.Actor)
		require.Equal(t, req.ArgsHash, approved.ArgsHashBefore)
		require.Empty(t, approved.ArgsHashAfter)
		require.JSONEq(t, `{"reason":"customer verified on the call"}`, string(approved.Detail))
		require.Equal(t, operator, minted.Actor)
		require.Equal(t, tok.ArgsHash, minted.ArgsHashBefore)
		require.Equal(t, tok.ID, detailOf(t, minted)["token_id"])
	})

	t.Run("ModifyReplacesTheArgsAndLogsBoth", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		edited := json.RawMessage(`{"amount":{"cents":900},"to":"+15551234567"}`)
		res, err := s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID:  req.ID,
			Decision:    ledger.DecisionModify,
			Actor:       operator,
			Reason:      "partial refund agreed",
			NewArgs:     edited,
			NewArgsHash: hashOf(edited),
			TokenTTL:    5 * time.Minute,
		})
		require.NoError(t, err)

		got := res.Request
		require.Equal(t, ledger.ApprovalApproved, got.Status)
		require.Equal(t, string(edited), string(got.Args), "edited args are stored byte for byte")
		require.Equal(t, hashOf(edited), got.ArgsHash)
		require.NotNil(t, res.Token)
		require.Equal(t, hashOf(edited), res.Token.ArgsHash, "the token is bound to the edited args")
		stored, err := s.ApprovalRequestGet(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, got, stored)

		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, []ledger.ApprovalEventKind{
			ledger.ApprovalEventRequested, ledger.ApprovalEventModified, ledger.ApprovalEventApproved, ledger.ApprovalEventTokenMinted,
		}, kindsOf(events))
		modified, approved := events[1], events[2]
		require.Equal(t, operator, modified.Actor)
		require.Equal(t, hashOf(oddArgs), modified.ArgsHashBefore)
		require.Equal(t, hashOf(edited), modified.ArgsHashAfter)
		detail := detailOf(t, modified)
		require.Equal(t, "partial refund agreed", detail["reason"])
		requireJSONEq(t, json.RawMessage(oddArgs), detail["args_before"])
		requireJSONEq(t, edited, detail["args_after"])
		require.Equal(t, hashOf(edited), approved.ArgsHashBefore)
		require.Empty(t, approved.ArgsHashAfter)
	})

	t.Run("RejectMintsNothing", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		res, err := s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID: req.ID, Decision: ledger.DecisionReject, Actor: operator, Reason: "not this customer",
		})
		require.NoError(t, err)
		require.Equal(t, ledger.ApprovalRejected, res.Request.Status)
		require.Equal(t, operator, res.Request.DecidedBy)
		require.NotNil(t, res.Request.DecidedAt)
		require.Nil(t, res.Token)

		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, []ledger.ApprovalEventKind{ledger.ApprovalEventRequested, ledger.ApprovalEventRejected}, kindsOf(events))
		require.JSONEq(t, `{"reason":"not this customer"}`, string(events[1].Detail))

		_, err = s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "worker:a")
		require.ErrorIs(t, err, ledger.ErrNoToken)
	})

	t.Run("RefusesRequestsNotPending", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		reject := func(id string) error {
			_, err := s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
				ApprovalID: id, Decision: ledger.DecisionReject, Actor: "operator:late",
			})
			return err
		}

		decided := openRequest(t, ctx, s)
		approve(t, ctx, s, decided.ID, time.Minute)
		require.ErrorIs(t, reject(decided.ID), ledger.ErrApprovalNotPending, "already decided")
		got, err := s.ApprovalRequestGet(ctx, decided.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.ApprovalApproved, got.Status)
		require.Equal(t, operator, got.DecidedBy, "the first decision stands")

		timedOut := openRequest(t, ctx, s)
		_, err = s.ApprovalRequestExpire(ctx, timedOut.ID, ledger.ApprovalTimedOut)
		require.NoError(t, err)
		require.ErrorIs(t, reject(timedOut.ID), ledger.ErrApprovalNotPending, "closed by its timer")

		// Past its timeout but not yet closed: the timer may be late, the
		// approver may not be.
		late, err := s.ApprovalRequestInsert(ctx, newApprovalRequest(time.Now().Add(-time.Hour)))
		require.NoError(t, err)
		_, err = s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID: late.ID, Decision: ledger.DecisionApprove, Actor: operator, TokenTTL: time.Minute,
		})
		require.ErrorIs(t, err, ledger.ErrApprovalNotPending, "past its timeout")
		got, err = s.ApprovalRequestGet(ctx, late.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.ApprovalPending, got.Status)

		requireEventKinds(t, s, decided.ID, []ledger.ApprovalEventKind{
			ledger.ApprovalEventRequested, ledger.ApprovalEventApproved, ledger.ApprovalEventTokenMinted,
		}, "a refused decision changes nothing, the log included")
		requireEventKinds(t, s, late.ID, []ledger.ApprovalEventKind{ledger.ApprovalEventRequested})

		require.ErrorIs(t, reject("apr_missing"), ledger.ErrNotFound)
	})

	t.Run("RefusesInvalidParams", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		edited := json.RawMessage(`{"amount":{"cents":1}}`)
		for name, p := range map[string]ledger.ApprovalDecideParams{
			"unknown decision": {Decision: "shrug", Actor: operator, TokenTTL: time.Minute},
			"no actor":         {Decision: ledger.DecisionApprove, TokenTTL: time.Minute},
			"approve, no TTL":  {Decision: ledger.DecisionApprove, Actor: operator},
			"modify, no TTL":   {Decision: ledger.DecisionModify, Actor: operator, NewArgs: edited, NewArgsHash: hashOf(edited)},
			"modify, no args":  {Decision: ledger.DecisionModify, Actor: operator, TokenTTL: time.Minute},
			"modify, bad hash": {Decision: ledger.DecisionModify, Actor: operator, TokenTTL: time.Minute, NewArgs: edited, NewArgsHash: hashOf(oddArgs)},
			"approve, args":    {Decision: ledger.DecisionApprove, Actor: operator, TokenTTL: time.Minute, NewArgs: edited, NewArgsHash: hashOf(edited)},
			"reject, args":     {Decision: ledger.DecisionReject, Actor: operator, NewArgs: edited, NewArgsHash: hashOf(edited)},
		} {
			p.ApprovalID = req.ID
			_, err := s.ApprovalDecide(ctx, p)
			require.Error(t, err, name)
			require.NotErrorIs(t, err, ledger.ErrApprovalNotPending, name)
		}
		got, err := s.ApprovalRequestGet(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, req, got)
	})

	t.Run("ConcurrentDecidersHaveOneWinner", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		const n = 20
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  = make([]error, n)
			tried = make([]ledger.Decision, n)
		)
		for i := range n {
			tried[i] = ledger.DecisionApprove
			if i%2 == 1 {
				tried[i] = ledger.DecisionReject
			}
			wg.Go(func() {
				<-start
				_, errs[i] = s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
					ApprovalID: req.ID, Decision: tried[i], Actor: operator, TokenTTL: time.Minute,
				})
			})
		}
		close(start)
		wg.Wait()

		winner := -1
		for i, err := range errs {
			if err == nil {
				require.Equal(t, -1, winner, "a second decider won")
				winner = i
				continue
			}
			require.ErrorIs(t, err, ledger.ErrApprovalNotPending)
		}
		require.NotEqual(t, -1, winner, "nobody won")

		want := []ledger.ApprovalEventKind{ledger.ApprovalEventRequested, ledger.ApprovalEventRejected}
		if tried[winner] == ledger.DecisionApprove {
			want = []ledger.ApprovalEventKind{ledger.ApprovalEventRequested, ledger.ApprovalEventApproved, ledger.ApprovalEventTokenMinted}
		}
		requireEventKinds(t, s, req.ID, want, "the winner's decision, logged once")
	})
}
