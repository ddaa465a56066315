package ledgertest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

func testApprovalToken(t *testing.T, setup setupFunc) {
	t.Run("SpendsOnce", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		minted := approve(t, ctx, s, req.ID, time.Hour).Token
		worker := "worker:" + req.OperationKey

		tok, err := s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, worker)
		require.NoError(t, err)
		require.Equal(t, minted.ID, tok.ID)
		require.Equal(t, req.ArgsHash, tok.ArgsHash)
		require.NotNil(t, tok.UsedAt)
		requireRecent(t, *tok.UsedAt)
		require.Equal(t, worker, tok.UsedBy)

		replay, err := s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "worker:replay")
		require.ErrorIs(t, err, ledger.ErrTokenUsed)
		require.Equal(t, tok, replay, "the spent token comes back, so its spender can recognise it")

		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, []ledger.ApprovalEventKind{
			ledger.ApprovalEventRequested, ledger.ApprovalEventApproved, ledger.ApprovalEventTokenMinted,
			ledger.ApprovalEventTokenUsed, ledger.ApprovalEventTokenRefused,
		}, kindsOf(events))
		used, refused := events[3], events[4]
		require.Equal(t, worker, used.Actor)
		require.Equal(t, req.ArgsHash, used.ArgsHashBefore)
		require.Equal(t, tok.ID, detailOf(t, used)["token_id"])
		require.Equal(t, "worker:replay", refused.Actor)
		require.Equal(t, "used", detailOf(t, refused)["reason"])
	})

	t.Run("RefusesAnExpiredToken", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		// A nanosecond rounds to a token that expires the instant it is
		// minted, so it has expired by the spend without any waiting.
		req := openRequest(t, ctx, s)
		stale := approve(t, ctx, s, req.ID, time.Nanosecond).Token

		tok, err := s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "worker:slow")
		require.ErrorIs(t, err, ledger.ErrTokenExpired)
		require.Zero(t, tok)

		fresh, err := s.ApprovalTokenMint(ctx, req.ID, time.Hour, "policy:token-expired")
		require.NoError(t, err)
		require.NotEqual(t, stale.ID, fresh.ID)
		require.Equal(t, req.ArgsHash, fresh.ArgsHash)
		tok, err = s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "worker:retry")
		require.NoError(t, err)
		require.Equal(t, fresh.ID, tok.ID)

		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, []ledger.ApprovalEventKind{
			ledger.ApprovalEventRequested, ledger.ApprovalEventApproved, ledger.ApprovalEventTokenMinted,
			ledger.ApprovalEventTokenRefused, ledger.ApprovalEventTokenMinted, ledger.ApprovalEventTokenUsed,
		}, kindsOf(events))
		require.Equal(t, "expired", detailOf(t, events[3])["reason"])
		remint := events[4]
		require.Equal(t, "policy:token-expired", remint.Actor)
		require.Equal(t, fresh.ID, detailOf(t, remint)["token_id"])
		require.Equal(t, []any{stale.ID}, detailOf(t, remint)["superseded_token_ids"])
	})

	t.Run("RefusesOtherArgs", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		approve(t, ctx, s, req.ID, time.Hour)
		other := hashOf(json.RawMessage(`{"amount":{"cents":999999}}`))

		_, err := s.ApprovalTokenSpend(ctx, req.ID, other, "worker:a")
		require.ErrorIs(t, err, ledger.ErrTokenMismatch)
		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		refused := events[len(events)-1]
		require.Equal(t, ledger.ApprovalEventTokenRefused, refused.Kind)
		require.Equal(t, req.ArgsHash, refused.ArgsHashBefore)
		require.Equal(t, "args_mismatch", detailOf(t, refused)["reason"])
		require.Equal(t, other, detailOf(t, refused)["presented_args_hash"])

		_, err = s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "worker:a")
		require.NoError(t, err, "a refused spend does not burn the token")
	})

	t.Run("RefusesWithoutAToken", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		pending := openRequest(t, ctx, s)
		_, err := s.ApprovalTokenSpend(ctx, pending.ID, pending.ArgsHash, "worker:a")
		require.ErrorIs(t, err, ledger.ErrNoToken)
		events, err := s.ApprovalEventList(ctx, pending.ID)
		require.NoError(t, err)
		require.Equal(t, "no_token", detailOf(t, events[len(events)-1])["reason"])

		_, err = s.ApprovalTokenSpend(ctx, "apr_missing", pending.ArgsHash, "worker:a")
		require.ErrorIs(t, err, ledger.ErrNotFound)

		_, err = s.ApprovalTokenSpend(ctx, pending.ID, "", "worker:a")
		require.Error(t, err, "no hash")
		_, err = s.ApprovalTokenSpend(ctx, pending.ID, pending.ArgsHash, "")
		require.Error(t, err, "no spender")
	})

	t.Run("ConcurrentSpendersHaveOneWinner", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		approve(t, ctx, s, req.ID, time.Hour)

		const n = 20
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  = make([]error, n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				_, errs[i] = s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, fmt.Sprintf("worker:%d", i))
			})
		}
		close(start)
		wg.Wait()

		spent := 0
		for _, err := range errs {
			if err == nil {
				spent++
				continue
			}
			require.ErrorIs(t, err, ledger.ErrTokenUsed)
		}
		require.Equal(t, 1, spent)

		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		count := map[ledger.ApprovalEventKind]int{}
		for _, e := range events {
			count[e.Kind]++
		}
		require.Equal(t, 1, count[ledger.ApprovalEventTokenUsed])
		require.Equal(t, n-1, count[ledger.ApprovalEventTokenRefused])
	})

	t.Run("MintForAPolicyDecision", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		ruled := insertRuleApproved(t, ctx, s)

		expired := openRequest(t, ctx, s)
		expired, err := s.ApprovalRequestExpire(ctx, expired.ID, ledger.ApprovalAutoApproved)
		require.NoError(t, err)

		for _, req := range []ledger.ApprovalRequest{ruled, expired} {
			tok, err := s.ApprovalTokenMint(ctx, req.ID, time.Hour, req.DecidedBy)
			require.NoError(t, err)
			require.Regexp(t, `^tok_[0-9a-f]{32}$`, tok.ID)
			require.Equal(t, req.ArgsHash, tok.ArgsHash)
			require.Nil(t, tok.UsedAt)
			require.WithinDuration(t, tok.CreatedAt.Add(time.Hour), tok.ExpiresAt, time.Second)

			events, err := s.ApprovalEventList(ctx, req.ID)
			require.NoError(t, err)
			minted := events[len(events)-1]
			require.Equal(t, ledger.ApprovalEventTokenMinted, minted.Kind)
			require.Equal(t, req.DecidedBy, minted.Actor, "the policy is the recorded actor")

			_, err = s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "worker:a")
			require.NoError(t, err)
		}
	})

	t.Run("MintSpendAuthorisesOnePolicyApprovedExecution", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := insertRuleApproved(t, ctx, s)
		worker := "invocation:" + req.InvocationID

		tok, err := s.ApprovalTokenMintSpend(ctx, req.ID, time.Hour, req.DecidedBy, worker)
		require.NoError(t, err)
		require.Equal(t, req.ArgsHash, tok.ArgsHash)
		require.NotNil(t, tok.UsedAt)
		require.Equal(t, worker, tok.UsedBy)

		// A retry after a crash finds its own spend; no second token is
		// minted for anyone.
		again, err := s.ApprovalTokenMintSpend(ctx, req.ID, time.Hour, req.DecidedBy, worker)
		require.ErrorIs(t, err, ledger.ErrTokenUsed)
		require.Equal(t, tok, again)
		_, err = s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "worker:other")
		require.ErrorIs(t, err, ledger.ErrTokenUsed)

		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, []ledger.ApprovalEventKind{
			ledger.ApprovalEventRequested, ledger.ApprovalEventAutoApproved, ledger.ApprovalEventTokenMinted,
			ledger.ApprovalEventTokenUsed, ledger.ApprovalEventTokenRefused, ledger.ApprovalEventTokenRefused,
		}, kindsOf(events))
		require.Equal(t, req.DecidedBy, events[2].Actor, "the policy mints")
		require.Equal(t, worker, events[3].Actor, "the execution spends")

		// Only a policy's approval mints its own token: a human's is spent
		// from the token the decision minted, and a pending one has none.
		pending := openRequest(t, ctx, s)
		_, err = s.ApprovalTokenMintSpend(ctx, pending.ID, time.Hour, "policy:test", worker)
		require.ErrorIs(t, err, ledger.ErrApprovalNotPending)
		human := openRequest(t, ctx, s)
		approve(t, ctx, s, human.ID, time.Hour)
		_, err = s.ApprovalTokenMintSpend(ctx, human.ID, time.Hour, "policy:test", worker)
		require.ErrorIs(t, err, ledger.ErrApprovalNotPending)
	})

	t.Run("MintSupersedesAnUnspentToken", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		first := approve(t, ctx, s, req.ID, time.Hour).Token
		second, err := s.ApprovalTokenMint(ctx, req.ID, time.Hour, operator)
		require.NoError(t, err)

		tok, err := s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "worker:a")
		require.NoError(t, err)
		require.Equal(t, second.ID, tok.ID)
		require.NotEqual(t, first.ID, tok.ID)
		_, err = s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "worker:b")
		require.ErrorIs(t, err, ledger.ErrTokenUsed, "superseding never yields a second spend")
	})

	t.Run("MintRefusesUnapprovedAndSpentRequests", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		mint := func(id string) error {
			_, err := s.ApprovalTokenMint(ctx, id, time.Hour, "policy:test")
			return err
		}

		pending := openRequest(t, ctx, s)
		require.ErrorIs(t, mint(pending.ID), ledger.ErrApprovalNotPending, "pending")

		rejected := openRequest(t, ctx, s)
		_, err := s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID: rejected.ID, Decision: ledger.DecisionReject, Actor: operator,
		})
		require.NoError(t, err)
		require.ErrorIs(t, mint(rejected.ID), ledger.ErrApprovalNotPending, "rejected")

		timedOut := openRequest(t, ctx, s)
		_, err = s.ApprovalRequestExpire(ctx, timedOut.ID, ledger.ApprovalTimedOut)
		require.NoError(t, err)
		require.ErrorIs(t, mint(timedOut.ID), ledger.ErrApprovalNotPending, "timed out")

		spent := openRequest(t, ctx, s)
		approve(t, ctx, s, spent.ID, time.Hour)
		_, err = s.ApprovalTokenSpend(ctx, spent.ID, spent.ArgsHash, "worker:a")
		require.NoError(t, err)
		require.ErrorIs(t, mint(spent.ID), ledger.ErrTokenUsed, "one approval, one execution")

		require.ErrorIs(t, mint("apr_missing"), ledger.ErrNotFound)

		_, err = s.ApprovalTokenMint(ctx, spent.ID, 0, "policy:test")
		require.Error(t, err, "no TTL")
		_, err = s.ApprovalTokenMint(ctx, spent.ID, time.Hour, "")
		require.Error(t, err, "no actor")

		for _, id := range []string{pending.ID, rejected.ID, timedOut.ID} {
			events, err := s.ApprovalEventList(ctx, id)
			require.NoError(t, err)
			require.NotContains(t, kindsOf(events), ledger.ApprovalEventTokenMinted)
		}
	})
}
