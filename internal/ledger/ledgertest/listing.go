package ledgertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

func testListing(t *testing.T, setup setupFunc) {
	t.Run("ApprovalPagesWalkEveryRequestOnceWhateverIsInserted", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		want := map[string]bool{}
		for i := range 7 {
			a := newApprovalRequest(soon())
			a.Tool = []string{"payments.refund", "sms.send"}[i%2]
			got, err := s.ApprovalRequestInsert(ctx, a)
			require.NoError(t, err)
			want[got.ID] = true
		}
		seen := map[string]bool{}
		q := ledger.PageQuery{Status: string(ledger.ApprovalPending), Limit: 3}
		var last time.Time
		for pages := 0; ; pages++ {
			require.Less(t, pages, 5, "the pages must end")
			p, err := s.ApprovalRequestPage(ctx, q)
			require.NoError(t, err)
			require.LessOrEqual(t, len(p.Items), 3)
			for _, a := range p.Items {
				require.False(t, seen[a.ID], "a row is listed once")
				require.False(t, a.CreatedAt.Before(last), "oldest first")
				seen[a.ID], last = true, a.CreatedAt
			}
			if pages == 0 {
				require.Equal(t, 7, p.Total)
				// Rows inserted while paging come after every row already
				// listed, and shift nothing.
				late, err := s.ApprovalRequestInsert(ctx, newApprovalRequest(soon()))
				require.NoError(t, err)
				want[late.ID] = true
			}
			if p.Next == nil {
				break
			}
			cur, err := ledger.ParseCursor(p.Next.String())
			require.NoError(t, err)
			q.After = &cur
		}
		require.Equal(t, want, seen)

		p, err := s.ApprovalRequestPage(ctx, ledger.PageQuery{Tool: "sms.send", AgentID: "agent_1"})
		require.NoError(t, err)
		require.Equal(t, 3, p.Total)
		require.Nil(t, p.Next, "one page holds them all")
		for _, a := range p.Items {
			require.Equal(t, "sms.send", a.Tool)
		}
		p, err = s.ApprovalRequestPage(ctx, ledger.PageQuery{AgentID: "agent_2"})
		require.NoError(t, err)
		require.Zero(t, p.Total)
		require.Empty(t, p.Items)

		future := time.Now().Add(time.Hour)
		p, err = s.ApprovalRequestPage(ctx, ledger.PageQuery{NewerThan: &future})
		require.NoError(t, err)
		require.Zero(t, p.Total, "nothing is newer than an hour from now")
		p, err = s.ApprovalRequestPage(ctx, ledger.PageQuery{OlderThan: &future})
		require.NoError(t, err)
		require.Equal(t, 8, p.Total, "everything is older than an hour from now")
	})

	t.Run("SessionAndRefusalPagesAreNewestFirst", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		for i := range 5 {
			_, err := s.SessionUpsert(ctx, ledger.Session{ID: fmt.Sprintf("ses_page_%d", i), AgentID: "agent_1"})
			require.NoError(t, err)
			require.NoError(t, s.RefusalInsert(ctx, ledger.Refusal{AgentID: "agent_1", Tool: "sms.send", Code: maestrotype.CodeToolNotAllowed}))
		}
		require.NoError(t, s.RefusalInsert(ctx, ledger.Refusal{AgentID: "agent_2", Tool: "sms.send", Code: maestrotype.CodeInvalidArgs}))

		var sessions []string
		q := ledger.PageQuery{AgentID: "agent_1", Limit: 2}
		for {
			p, err := s.SessionPage(ctx, q)
			require.NoError(t, err)
			require.Equal(t, 5, p.Total)
			for _, x := range p.Items {
				sessions = append(sessions, x.ID)
			}
			if p.Next == nil {
				break
			}
			q.After = p.Next
		}
		require.Len(t, sessions, 5)
		require.Contains(t, sessions, "ses_page_0")

		var refusals []int64
		q = ledger.PageQuery{Limit: 4}
		for {
			p, err := s.RefusalPage(ctx, q)
			require.NoError(t, err)
			require.Equal(t, 6, p.Total)
			for _, r := range p.Items {
				refusals = append(refusals, r.ID)
			}
			if p.Next == nil {
				break
			}
			q.After = p.Next
		}
		require.Len(t, refusals, 6)
		require.IsDecreasing(t, refusals, "newest first")

		p, err := s.RefusalPage(ctx, ledger.PageQuery{Status: string(maestrotype.CodeInvalidArgs)})
		require.NoError(t, err)
		require.Equal(t, 1, p.Total)
		require.Equal(t, "agent_2", p.Items[0].AgentID)

		_, err = s.RefusalPage(ctx, ledger.PageQuery{After: &ledger.Cursor{At: time.Now(), Key: "not-a-number"}})
		require.ErrorIs(t, err, ledger.ErrBadCursor)
	})

	t.Run("ReconciliationQueueListsHeldEffects", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		p, err := s.ReconciliationPage(ctx, ledger.PageQuery{})
		require.NoError(t, err)
		require.Zero(t, p.Total)
		require.Empty(t, p.Items)

		// Two held writes and a held money effect, claimed in that order.
		var keys []string
		for _, class := range []maestrotype.Effect{maestrotype.EffectWrite, maestrotype.EffectWrite, maestrotype.EffectMoney} {
			c := claimParams("worker-a", time.Hour)
			c.EffectClass = class
			_, err := s.EffectClaim(ctx, c)
			require.NoError(t, err)
			require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
				OperationKey: c.OperationKey, Owner: "worker-a", Status: maestrotype.EffectNeedsReconciliation, Error: "timeout",
			}))
			keys = append(keys, c.OperationKey)
		}
		def, err := s.DeferredInsert(ctx, ledger.DeferredItem{SessionID: "ses_rq", OperationKey: "ses_rq:msg", Tool: "take_message", Args: oddArgs})
		require.NoError(t, err)
		_, err = s.PostCallItemUpsert(ctx, ledger.PostCallItem{SessionID: "ses_rq", Key: def.ID, Tool: "deliver_message", Source: "deferred:" + def.ID,
			DeferredID: def.ID, OperationKey: "postcall:ses_rq:" + def.ID, Status: ledger.PostCallHeld, Reason: "no channel delivered it"})
		require.NoError(t, err)

		var got []ledger.ReconciliationItem
		q := ledger.PageQuery{Limit: 1}
		for {
			p, err := s.ReconciliationPage(ctx, q)
			require.NoError(t, err)
			require.Equal(t, 4, p.Total)
			got = append(got, p.Items...)
			if p.Next == nil {
				break
			}
			q.After = p.Next
		}
		require.Len(t, got, 4)
		require.Equal(t, ledger.QueueHeldPostCall, got[0].Kind, "a promise to a caller comes first")
		require.Equal(t, "ses_rq", got[0].SessionID)
		require.Equal(t, def.ID, got[0].ItemKey)
		require.Equal(t, keys[2], got[1].OperationKey, "then money")
		require.Equal(t, keys[:2], []string{got[2].OperationKey, got[3].OperationKey}, "then the rest, oldest first")

		p, err = s.ReconciliationPage(ctx, ledger.PageQuery{Status: string(ledger.QueueHeldEffect), Tool: "sms.send"})
		require.NoError(t, err)
		require.Equal(t, 3, p.Total)
		p, err = s.ReconciliationPage(ctx, ledger.PageQuery{Tool: "deliver_message"})
		require.NoError(t, err)
		require.Equal(t, 1, p.Total)
	})

	t.Run("CursorsAreOpaqueAndChecked", func(t *testing.T) {
		t.Parallel()
		c := ledger.Cursor{Rank: 2, At: time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC), Key: "apr_1"}
		got, err := ledger.ParseCursor(c.String())
		require.NoError(t, err)
		require.Equal(t, c, got)
		for _, bad := range []string{"", "!!", "e30", "eyJ0IjoiMjAzMC0wMS0wMlQwMzowNDowNVoifQ"} {
			_, err := ledger.ParseCursor(bad)
			require.ErrorIs(t, err, ledger.ErrBadCursor, bad)
		}
	})

	t.Run("LiveSessionCapHoldsUnderABurst", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		const limit, tries = 3, 12
		errs := burst(tries, func(i int) error {
			_, err := s.SessionUpsertCapped(ctx, ledger.Session{ID: fmt.Sprintf("ses_cap_%d", i), AgentID: "agent_cap"}, limit)
			return err
		})
		opened := 0
		for _, err := range errs {
			if err == nil {
				opened++
				continue
			}
			var ce *ledger.CapError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, ledger.CapLiveSessions, ce.Cap)
			require.Equal(t, limit, ce.Limit)
			require.Equal(t, "agent_cap", ce.AgentID)
		}
		require.Equal(t, limit, opened, "exactly the cap's worth opened")

		// A session that exists is found whatever the count.
		p, err := s.SessionPage(ctx, ledger.PageQuery{AgentID: "agent_cap"})
		require.NoError(t, err)
		require.Equal(t, limit, p.Total)
		got, err := s.SessionUpsertCapped(ctx, ledger.Session{ID: p.Items[0].ID, AgentID: "agent_cap"}, limit)
		require.NoError(t, err)
		require.Equal(t, p.Items[0].ID, got.ID)
		// Ending one frees a place; another agent has its own count.
		_, _, err = s.SessionEnd(ctx, p.Items[0].ID, nil)
		require.NoError(t, err)
		_, err = s.SessionUpsertCapped(ctx, ledger.Session{ID: "ses_cap_new", AgentID: "agent_cap"}, limit)
		require.NoError(t, err)
		_, err = s.SessionUpsertCapped(ctx, ledger.Session{ID: "ses_cap_next", AgentID: "agent_cap"}, limit)
		require.ErrorIs(t, err, ledger.ErrCapReached)
		_, err = s.SessionUpsertCapped(ctx, ledger.Session{ID: "ses_other", AgentID: "agent_other"}, limit)
		require.NoError(t, err)
	})

	t.Run("OpenApprovalCapHoldsUnderABurst", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		const limit, tries = 4, 12
		awaiting := func() ledger.Invocation {
			inv := newInvocation("ses_gate")
			inv.Route, inv.State = maestrotype.RouteGated, maestrotype.InvocationAwaitingApproval
			return inv
		}
		var mu sync.Mutex
		var created []ledger.Invocation
		errs := burst(tries, func(int) error {
			inv, _, err := s.InvocationInsertCapped(ctx, awaiting(), limit)
			if err == nil {
				mu.Lock()
				created = append(created, inv)
				mu.Unlock()
			}
			return err
		})
		for _, err := range errs {
			if err != nil {
				require.ErrorIs(t, err, ledger.ErrCapReached)
			}
		}
		require.Len(t, created, limit, "exactly the cap's worth recorded")

		// A call re-sent under its key is answered, not refused.
		again := created[0]
		got, fresh, err := s.InvocationInsertCapped(ctx, again, limit)
		require.NoError(t, err)
		require.False(t, fresh)
		require.Equal(t, again.ID, got.ID)

		// Calls that wait for no one are not capped.
		_, _, err = s.InvocationInsertCapped(ctx, newInvocation("ses_gate"), limit)
		require.NoError(t, err)

		// A decided request frees its place.
		a := newApprovalRequest(soon())
		a.InvocationID, a.OperationKey = created[0].ID, created[0].OperationKey
		req, err := s.ApprovalRequestInsert(ctx, a)
		require.NoError(t, err)
		_, _, err = s.InvocationInsertCapped(ctx, awaiting(), limit)
		require.ErrorIs(t, err, ledger.ErrCapReached, "a pending request still counts")
		_, err = s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{ApprovalID: req.ID, Decision: ledger.DecisionReject, Actor: operator})
		require.NoError(t, err)
		_, _, err = s.InvocationInsertCapped(ctx, awaiting(), limit)
		require.NoError(t, err)
	})
}

// burst runs n calls of fn at once and returns their errors.
func burst(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errs
}
