package ledgertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

// RunConformance runs the behaviour every Store must share against stores
// made by open, one fresh store per subtest.
func RunConformance(t *testing.T, open func(t *testing.T) ledger.Store) {
	setup := func(t *testing.T) (ledger.Store, context.Context) {
		t.Helper()
		return open(t), t.Context()
	}

	t.Run("Session", func(t *testing.T) {
		t.Parallel()
		testSession(t, setup)
	})
	t.Run("SessionRollback", func(t *testing.T) {
		t.Parallel()
		testSessionRollback(t, setup)
	})
	t.Run("Invocation", func(t *testing.T) {
		t.Parallel()
		testInvocation(t, setup)
	})
	t.Run("InvocationAdmit", func(t *testing.T) {
		t.Parallel()
		testInvocationAdmit(t, setup)
	})
	t.Run("EffectClaim", func(t *testing.T) {
		t.Parallel()
		testEffectClaim(t, setup)
	})
	t.Run("EffectSettle", func(t *testing.T) {
		t.Parallel()
		testEffectSettle(t, setup)
	})
	t.Run("EffectFold", func(t *testing.T) {
		t.Parallel()
		testEffectFold(t, setup)
	})
	t.Run("Reconciliation", func(t *testing.T) {
		t.Parallel()
		testReconciliation(t, setup)
	})
	t.Run("ReceiptOwner", func(t *testing.T) {
		t.Parallel()
		testReceiptOwner(t, setup)
	})
	t.Run("EffectStateReads", func(t *testing.T) {
		t.Parallel()
		testEffectStateReads(t, setup)
	})
	t.Run("EffectHandOver", func(t *testing.T) {
		t.Parallel()
		testEffectHandOver(t, setup)
	})
	t.Run("Sweep", func(t *testing.T) {
		t.Parallel()
		testSweep(t, setup)
	})
	t.Run("Canary", func(t *testing.T) {
		t.Parallel()
		testCanary(t, setup)
	})
	t.Run("MessageStatus", func(t *testing.T) {
		t.Parallel()
		testMessageStatus(t, setup)
	})
	t.Run("Undo", func(t *testing.T) {
		t.Parallel()
		testUndo(t, setup)
	})
	t.Run("UndoStatus", func(t *testing.T) {
		t.Parallel()
		testUndoStatus(t, setup)
	})
	t.Run("Deferred", func(t *testing.T) {
		t.Parallel()
		testDeferred(t, setup)
	})
	t.Run("DeferredOutcome", func(t *testing.T) {
		t.Parallel()
		testDeferredOutcome(t, setup)
	})
	t.Run("PostCall", func(t *testing.T) {
		t.Parallel()
		testPostCall(t, setup)
	})
	t.Run("ApprovalRequest", func(t *testing.T) {
		t.Parallel()
		testApprovalRequest(t, setup)
	})
	t.Run("ApprovalEvent", func(t *testing.T) {
		t.Parallel()
		testApprovalEvent(t, setup)
	})
	t.Run("ApprovalDecide", func(t *testing.T) {
		t.Parallel()
		testApprovalDecide(t, setup)
	})
	t.Run("ApprovalToken", func(t *testing.T) {
		t.Parallel()
		testApprovalToken(t, setup)
	})
	t.Run("AuditMoneyEffects", func(t *testing.T) {
		t.Parallel()
		testAuditMoneyEffects(t, setup)
	})
	t.Run("ToolRegistry", func(t *testing.T) {
		t.Parallel()
		testToolRegistry(t, setup)
	})
	t.Run("Refusal", func(t *testing.T) {
		t.Parallel()
		testRefusal(t, setup)
	})
	t.Run("Listing", func(t *testing.T) {
		t.Parallel()
		testListing(t, setup)
	})
	t.Run("MetricCounts", func(t *testing.T) {
		t.Parallel()
		testMetricCounts(t, setup)
	})
	t.Run("Outbox", func(t *testing.T) {
		t.Parallel()
		testOutbox(t, setup)
		testOutboxWake(t, setup)
	})
	t.Run("Callback", func(t *testing.T) {
		t.Parallel()
		testCallback(t, setup)
	})
	t.Run("PlatformSignature", func(t *testing.T) {
		t.Parallel()
		testPlatformSignature(t, setup)
	})
	t.Run("ConsoleSession", func(t *testing.T) {
		t.Parallel()
		testConsoleSession(t, setup)
	})
}

type setupFunc func(t *testing.T) (ledger.Store, context.Context)

// oddArgs is valid JSON in a form jsonb would rewrite (spacing, key order),
// to prove the frozen arguments come back byte for byte.
var oddArgs = json.RawMessage(`{"to": "+15551234567",  "body":"hi", "amount" :{"cents":1200}}`)

func testInvocation(t *testing.T, setup setupFunc) {
	t.Run("InsertThenGet", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		inv := newInvocation("ses_a")
		got, created, err := s.InvocationInsert(ctx, inv)
		require.NoError(t, err)
		require.True(t, created)
		require.Regexp(t, `^inv_[0-9a-f]{16}$`, got.ID)
		require.Equal(t, inv.OperationKey, got.OperationKey)
		require.Equal(t, "ses_a", got.SessionID)
		require.Equal(t, "agent_1", got.AgentID)
		require.Equal(t, "sms.send", got.Tool)
		require.Equal(t, string(oddArgs), string(got.Args), "args must round-trip byte for byte")
		require.Equal(t, hashOf(got.Args), got.ArgsHash)
		require.Equal(t, maestrotype.RouteCompensable, got.Route)
		require.Equal(t, maestrotype.InvocationRunning, got.State)
		require.Nil(t, got.Observation)
		require.Equal(t, "wf_"+inv.OperationKey, got.WorkflowID)
		require.Empty(t, got.ToolCallID)
		require.Empty(t, got.EffectClass)
		require.Empty(t, got.CatalogVersion)
		requireRecent(t, got.CreatedAt)
		requireRecent(t, got.UpdatedAt)

		byID, err := s.InvocationGet(ctx, got.ID)
		require.NoError(t, err)
		require.Equal(t, got, byID)

		byKey, err := s.InvocationGetByKey(ctx, inv.OperationKey)
		require.NoError(t, err)
		require.Equal(t, got, byKey)
	})

	t.Run("InsertKeepsCorrelationAndFrozenClass", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		inv := newInvocation("ses_a")
		inv.ToolCallID, inv.EffectClass, inv.CatalogVersion = "call_1", maestrotype.EffectWrite, "h1"
		got, created, err := s.InvocationInsert(ctx, inv)
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, "call_1", got.ToolCallID)
		require.Equal(t, maestrotype.EffectWrite, got.EffectClass)
		require.Equal(t, "h1", got.CatalogVersion)

		// A re-issue under the same key keeps the first call's record.
		again := inv
		again.ToolCallID, again.CatalogVersion = "call_2", "h2"
		dup, created, err := s.InvocationInsert(ctx, again)
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, got, dup)
	})

	t.Run("InsertKeepsCallerID", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		inv := newInvocation("ses_a")
		inv.ID = "inv_chosen"
		inv.SessionID, inv.AgentID, inv.WorkflowID = "", "", ""
		got, created, err := s.InvocationInsert(ctx, inv)
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, "inv_chosen", got.ID)
		require.Empty(t, got.SessionID)
		require.Empty(t, got.AgentID)
		require.Empty(t, got.WorkflowID)
	})

	t.Run("InsertDuplicateKeyReturnsOriginal", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		first, created, err := s.InvocationInsert(ctx, newInvocation("ses_a"))
		require.NoError(t, err)
		require.True(t, created)

		reused := newInvocation("ses_b")
		reused.OperationKey = first.OperationKey
		reused.Args = json.RawMessage(`{"to":"+15550000000"}`)
		reused.ArgsHash = hashOf(reused.Args)
		got, created, err := s.InvocationInsert(ctx, reused)
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, first, got)
		require.NotEqual(t, reused.ArgsHash, got.ArgsHash, "the caller detects the reused key by the hash")
	})

	t.Run("InsertRefusesUnknownRouteAndState", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		inv := newInvocation("ses_a")
		inv.Route = "teleport"
		_, _, err := s.InvocationInsert(ctx, inv)
		require.Error(t, err)

		inv = newInvocation("ses_a")
		inv.State = "exploded"
		_, _, err = s.InvocationInsert(ctx, inv)
		require.Error(t, err)
	})

	t.Run("Finish", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_a"))
		require.NoError(t, err)

		obs := maestrotype.Observation{
			Status:  maestrotype.StatusSuccess,
			Summary: "SMS accepted by Twilio",
			Wording: "I've sent the text.",
			Payload: json.RawMessage(`{"segments":1}`),
			Source:  &maestrotype.Source{System: "twilio", Tool: "sms.send", OperationKey: inv.OperationKey},
			Receipt: newReceipt("SM123"),
		}
		finished, err := s.InvocationFinishRow(ctx, inv.ID, maestrotype.InvocationSucceeded, obs)
		require.NoError(t, err)

		got, err := s.InvocationGet(ctx, inv.ID)
		require.NoError(t, err)
		require.Equal(t, maestrotype.InvocationSucceeded, got.State)
		require.NotNil(t, got.Observation)
		requireJSONEq(t, obs, *got.Observation)
		require.False(t, got.UpdatedAt.Before(got.CreatedAt))
		require.Equal(t, got, finished, "the finish returns the row as a read finds it")
	})

	t.Run("FinishRefusesNonFinalState", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_a"))
		require.NoError(t, err)
		err = s.InvocationFinish(ctx, inv.ID, maestrotype.InvocationAwaitingApproval, maestrotype.Observation{})
		require.Error(t, err)
	})

	t.Run("SetStateAcceptsEveryState", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_a"))
		require.NoError(t, err)
		for _, state := range []maestrotype.InvocationState{
			maestrotype.InvocationAwaitingApproval,
			maestrotype.InvocationSucceeded,
			maestrotype.InvocationFailed,
			maestrotype.InvocationRecorded,
			maestrotype.InvocationRejected,
			maestrotype.InvocationTimedOut,
			maestrotype.InvocationNeedsReconciliation,
			maestrotype.InvocationRunning,
		} {
			require.NoError(t, s.InvocationSetState(ctx, inv.ID, state), state)
			got, err := s.InvocationGet(ctx, inv.ID)
			require.NoError(t, err)
			require.Equal(t, state, got.State)
		}
		require.Error(t, s.InvocationSetState(ctx, inv.ID, "exploded"))
	})

	t.Run("ListBySession", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		var want []string
		for range 3 {
			inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_a"))
			require.NoError(t, err)
			want = append(want, inv.ID)
		}
		_, _, err := s.InvocationInsert(ctx, newInvocation("ses_b"))
		require.NoError(t, err)

		got, err := s.InvocationListBySession(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, want, invocationIDs(got), "in admission order")

		none, err := s.InvocationListBySession(ctx, "ses_unknown")
		require.NoError(t, err)
		require.NotNil(t, none)
		require.Empty(t, none)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.InvocationGet(ctx, "inv_missing")
		require.ErrorIs(t, err, ledger.ErrNotFound)
		_, err = s.InvocationGetByKey(ctx, "op_missing")
		require.ErrorIs(t, err, ledger.ErrNotFound)
		err = s.InvocationFinish(ctx, "inv_missing", maestrotype.InvocationFailed, maestrotype.Observation{})
		require.ErrorIs(t, err, ledger.ErrNotFound)
		err = s.InvocationSetState(ctx, "inv_missing", maestrotype.InvocationFailed)
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}

func testEffectClaim(t *testing.T, setup setupFunc) {
	t.Run("New", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		res, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimNew, res.Outcome)
		require.Nil(t, res.Undo)

		e := res.Effect
		require.Equal(t, p.OperationKey, e.OperationKey)
		require.Equal(t, p.InvocationID, e.InvocationID)
		require.Equal(t, p.Tool, e.Tool)
		require.Equal(t, p.PayloadHash, e.PayloadHash)
		require.Equal(t, maestrotype.EffectInProgress, e.Status)
		require.Equal(t, "worker-a", e.LeaseOwner)
		require.Equal(t, 1, e.Attempts)
		require.JSONEq(t, string(p.BeforeState), string(e.BeforeState))
		require.Nil(t, e.AfterState)
		require.Nil(t, e.Receipt)
		require.Nil(t, e.Result)
		require.Empty(t, e.Error)
		requireRecent(t, e.CreatedAt)
		require.WithinDuration(t, e.CreatedAt.Add(time.Hour), e.LeaseExpiresAt, time.Second)

		got, err := s.EffectGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.Equal(t, e, got)
	})

	t.Run("Settled", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		for _, status := range []maestrotype.EffectStatus{
			maestrotype.EffectSucceeded,
			maestrotype.EffectFailed,
			maestrotype.EffectNeedsReconciliation,
		} {
			p := claimParams("worker-a", time.Hour)
			_, err := s.EffectClaim(ctx, p)
			require.NoError(t, err)
			require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
				OperationKey: p.OperationKey,
				Owner:        "worker-a",
				Status:       status,
				Receipt:      newReceipt("SM_" + string(status)),
			}))

			p.Owner = "worker-b"
			res, err := s.EffectClaim(ctx, p)
			require.NoError(t, err)
			require.Equal(t, ledger.ClaimSettled, res.Outcome, status)
			require.Equal(t, status, res.Effect.Status)
			require.Equal(t, "worker-a", res.Effect.LeaseOwner)
			require.Equal(t, newReceipt("SM_"+string(status)), res.Effect.Receipt)
			require.Equal(t, 1, res.Effect.Attempts)
		}
	})

	t.Run("Conflict", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)

		other := p
		other.Owner = "worker-b"
		other.PayloadHash = hashOf(json.RawMessage(`{"different":true}`))
		res, err := s.EffectClaim(ctx, other)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimConflict, res.Outcome, "in progress")
		require.Equal(t, p.PayloadHash, res.Effect.PayloadHash)

		require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
			OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectSucceeded,
		}))
		res, err = s.EffectClaim(ctx, other)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimConflict, res.Outcome, "settled")
	})

	t.Run("BusyWhileLeaseLive", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)

		for _, owner := range []string{"worker-b", "worker-a"} {
			p.Owner = owner
			res, err := s.EffectClaim(ctx, p)
			require.NoError(t, err)
			require.Equal(t, ledger.ClaimBusy, res.Outcome, owner)
			require.Equal(t, "worker-a", res.Effect.LeaseOwner)
			require.Equal(t, 1, res.Effect.Attempts)
		}
	})

	t.Run("TakeoverAfterLeaseExpires", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		// A nanosecond rounds to a lease that ends the instant it starts,
		// so it has expired by the next claim without any waiting.
		p := claimParams("worker-a", time.Nanosecond)
		first, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimNew, first.Outcome)

		p.Owner = "worker-b"
		p.LeaseTTL = time.Hour
		p.BeforeState = json.RawMessage(`{"seen":"after the effect"}`)
		res, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimTakeover, res.Outcome)
		require.Equal(t, maestrotype.EffectInProgress, res.Effect.Status)
		require.Equal(t, "worker-b", res.Effect.LeaseOwner)
		require.Equal(t, 2, res.Effect.Attempts)
		require.True(t, res.Effect.LeaseExpiresAt.After(first.Effect.LeaseExpiresAt))
		require.JSONEq(t, string(first.Effect.BeforeState), string(res.Effect.BeforeState),
			"the first attempt's before-state is the trustworthy one")

		p.Owner = "worker-c"
		res, err = s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimBusy, res.Outcome, "the new lease is live")

		err = s.EffectSettle(ctx, ledger.EffectSettleParams{
			OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectSucceeded,
		})
		require.ErrorIs(t, err, ledger.ErrLeaseLost, "the stale holder is fenced out")
		require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
			OperationKey: p.OperationKey, Owner: "worker-b", Status: maestrotype.EffectSucceeded,
		}))
	})

	t.Run("ConcurrentClaimsHaveOneWinner", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		const n = 50
		p := claimParams("", time.Hour)
		var (
			wg       sync.WaitGroup
			start    = make(chan struct{})
			outcomes = make([]ledger.ClaimOutcome, n)
			errs     = make([]error, n)
		)
		for i := range n {
			wg.Go(func() {
				mine := p
				mine.Owner = fmt.Sprintf("worker-%d", i)
				mine.Undo = &ledger.UndoEntry{SessionID: "ses_race", CompensationTool: "sms.retract"}
				<-start
				res, err := s.EffectClaim(ctx, mine)
				outcomes[i], errs[i] = res.Outcome, err
			})
		}
		close(start)
		wg.Wait()

		count := map[ledger.ClaimOutcome]int{}
		for i := range n {
			require.NoError(t, errs[i])
			count[outcomes[i]]++
		}
		require.Equal(t, map[ledger.ClaimOutcome]int{ledger.ClaimNew: 1, ledger.ClaimBusy: n - 1}, count)

		undo, err := s.UndoListBySession(ctx, "ses_race")
		require.NoError(t, err)
		require.Len(t, undo, 1, "only the winner pushes its compensation")
	})

	t.Run("ConcurrentTakeoversHaveOneWinner", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-crashed", time.Nanosecond)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)

		const n = 50
		p.LeaseTTL = time.Hour
		outcomes, errs := make([]ledger.ClaimOutcome, n), make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				mine := p
				mine.Owner = fmt.Sprintf("worker-%d", i)
				<-start
				res, err := s.EffectClaim(ctx, mine)
				outcomes[i], errs[i] = res.Outcome, err
			})
		}
		close(start)
		wg.Wait()

		count := map[ledger.ClaimOutcome]int{}
		for i := range n {
			require.NoError(t, errs[i])
			count[outcomes[i]]++
		}
		require.Equal(t, map[ledger.ClaimOutcome]int{ledger.ClaimTakeover: 1, ledger.ClaimBusy: n - 1}, count)

		got, err := s.EffectGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.Equal(t, 2, got.Attempts)
	})

	t.Run("RefusesInvalidParams", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		for name, mutate := range map[string]func(*ledger.EffectClaimParams){
			"no key":      func(p *ledger.EffectClaimParams) { p.OperationKey = "" },
			"no hash":     func(p *ledger.EffectClaimParams) { p.PayloadHash = "" },
			"no owner":    func(p *ledger.EffectClaimParams) { p.Owner = "" },
			"no TTL":      func(p *ledger.EffectClaimParams) { p.LeaseTTL = 0 },
			"foreign key": func(p *ledger.EffectClaimParams) { p.Undo = &ledger.UndoEntry{OperationKey: "op_other"} },
		} {
			p := claimParams("worker-a", time.Hour)
			mutate(&p)
			_, err := s.EffectClaim(ctx, p)
			require.Error(t, err, name)
		}
	})

	t.Run("ListByStatus", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		var want []string
		for i := range 4 {
			p := claimParams("worker-a", time.Hour)
			_, err := s.EffectClaim(ctx, p)
			require.NoError(t, err)
			status := maestrotype.EffectNeedsReconciliation
			if i == 2 {
				status = maestrotype.EffectSucceeded
			} else {
				want = append(want, p.OperationKey)
			}
			require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
				OperationKey: p.OperationKey, Owner: "worker-a", Status: status, Error: "timeout",
			}))
		}

		got, err := s.EffectListByStatus(ctx, maestrotype.EffectNeedsReconciliation, 0)
		require.NoError(t, err)
		require.Equal(t, want, effectKeys(got), "oldest first")
		require.Equal(t, "timeout", got[0].Error)

		got, err = s.EffectListByStatus(ctx, maestrotype.EffectNeedsReconciliation, 2)
		require.NoError(t, err)
		require.Equal(t, want[:2], effectKeys(got))

		got, err = s.EffectListByStatus(ctx, maestrotype.EffectInProgress, 0)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Empty(t, got)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.EffectGet(ctx, "op_missing")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}

func testEffectSettle(t *testing.T, setup setupFunc) {
	t.Run("RecordsOutcome", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		claimed, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)

		result := &maestrotype.Observation{
			Status:  maestrotype.StatusSuccess,
			Summary: "sent",
			Receipt: newReceipt("SM9"),
		}
		require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
			OperationKey: p.OperationKey,
			Owner:        "worker-a",
			Status:       maestrotype.EffectSucceeded,
			Receipt:      newReceipt("SM9"),
			AfterState:   json.RawMessage(`{"messages":1}`),
			Result:       result,
		}))

		got, err := s.EffectGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.Equal(t, maestrotype.EffectSucceeded, got.Status)
		require.Equal(t, newReceipt("SM9"), got.Receipt)
		require.JSONEq(t, `{"messages":1}`, string(got.AfterState))
		require.NotNil(t, got.Result)
		requireJSONEq(t, result, got.Result)
		require.Empty(t, got.Error)
		require.Equal(t, claimed.Effect.CreatedAt, got.CreatedAt)
		require.False(t, got.UpdatedAt.Before(claimed.Effect.UpdatedAt))
	})

	t.Run("LeaseLost", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		settle := func(key, owner string) error {
			return s.EffectSettle(ctx, ledger.EffectSettleParams{
				OperationKey: key, Owner: owner, Status: maestrotype.EffectSucceeded,
			})
		}

		require.ErrorIs(t, settle(p.OperationKey, "worker-b"), ledger.ErrLeaseLost, "another owner")
		require.ErrorIs(t, settle("op_missing", "worker-a"), ledger.ErrLeaseLost, "never claimed")
		require.NoError(t, settle(p.OperationKey, "worker-a"))
		require.ErrorIs(t, settle(p.OperationKey, "worker-a"), ledger.ErrLeaseLost, "already settled")
	})

	t.Run("ExpiredButNotTakenOver", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		// The holder's lease ran out but nobody took over: its outcome is
		// still the only record of what happened, so it must land.
		p := claimParams("worker-a", time.Nanosecond)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
			OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectSucceeded,
		}))
	})

	t.Run("ReleaseLetsTheNextAttemptClaimAfresh", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		p.Undo = &ledger.UndoEntry{SessionID: "ses_r", CompensationTool: "wo.cancel"}
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.ErrorIs(t, s.EffectRelease(ctx, p.OperationKey, "worker-b"), ledger.ErrLeaseLost, "only the holder may release")
		require.NoError(t, s.EffectRelease(ctx, p.OperationKey, "worker-a"))
		_, err = s.EffectGet(ctx, p.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound)

		p.Owner = "worker-a2"
		res, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimNew, res.Outcome, "a released key is claimed as new, not taken over")
		require.NotNil(t, res.Undo)
		list, err := s.UndoListBySession(ctx, "ses_r")
		require.NoError(t, err)
		require.Len(t, list, 1, "the released claim's undo entry went with it")

		require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
			OperationKey: p.OperationKey, Owner: "worker-a2", Status: maestrotype.EffectSucceeded,
		}))
		require.ErrorIs(t, s.EffectRelease(ctx, p.OperationKey, "worker-a2"), ledger.ErrLeaseLost, "a settled effect cannot be released")
	})

	t.Run("RefusesNonFinalStatus", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		err = s.EffectSettle(ctx, ledger.EffectSettleParams{
			OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectInProgress,
		})
		require.Error(t, err)
		require.NotErrorIs(t, err, ledger.ErrLeaseLost)
	})
}

func testUndo(t *testing.T, setup setupFunc) {
	t.Run("PushedWithNewClaim", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		p.Undo = &ledger.UndoEntry{
			SessionID:           "ses_a",
			CompensationTool:    "sms.retract",
			CompensationVersion: "v2",
			ArgsSnapshot:        oddArgs,
			Status:              ledger.UndoCompensated, // ignored: a new entry is pending
		}
		res, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimNew, res.Outcome)
		require.NotNil(t, res.Undo)

		u := *res.Undo
		require.Regexp(t, `^undo_[0-9a-f]{16}$`, u.ID)
		require.Equal(t, "ses_a", u.SessionID)
		require.Equal(t, p.OperationKey, u.OperationKey)
		require.Positive(t, u.Seq)
		require.Equal(t, "sms.retract", u.CompensationTool)
		require.Equal(t, "v2", u.CompensationVersion)
		require.Equal(t, string(oddArgs), string(u.ArgsSnapshot))
		require.Equal(t, ledger.UndoPending, u.Status)
		requireRecent(t, u.CreatedAt)

		list, err := s.UndoListBySession(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, []ledger.UndoEntry{u}, list)
	})

	t.Run("ListIsLIFO", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		var pushed []string
		for i := range 3 {
			p := claimParams("worker-a", time.Hour)
			p.Undo = &ledger.UndoEntry{
				ID:               fmt.Sprintf("undo_%d", i),
				SessionID:        "ses_a",
				CompensationTool: "refund",
			}
			_, err := s.EffectClaim(ctx, p)
			require.NoError(t, err)
			pushed = append(pushed, p.Undo.ID)
		}
		other := claimParams("worker-a", time.Hour)
		other.Undo = &ledger.UndoEntry{SessionID: "ses_b", CompensationTool: "refund"}
		_, err := s.EffectClaim(ctx, other)
		require.NoError(t, err)

		list, err := s.UndoListBySession(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, []string{pushed[2], pushed[1], pushed[0]}, undoIDs(list))
		require.Greater(t, list[0].Seq, list[1].Seq)
		require.Greater(t, list[1].Seq, list[2].Seq)

		none, err := s.UndoListBySession(ctx, "ses_unknown")
		require.NoError(t, err)
		require.NotNil(t, none)
		require.Empty(t, none)
	})

	t.Run("NotPushedUnlessNew", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		undo := func(id string) *ledger.UndoEntry {
			return &ledger.UndoEntry{ID: id, SessionID: "ses_a", CompensationTool: "refund"}
		}
		p := claimParams("worker-a", time.Nanosecond)
		p.Undo = undo("undo_first")
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)

		conflict := p
		conflict.Owner = "worker-b"
		conflict.PayloadHash = hashOf(json.RawMessage(`{"other":1}`))
		conflict.Undo = undo("undo_conflict")
		res, err := s.EffectClaim(ctx, conflict)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimConflict, res.Outcome)
		require.Nil(t, res.Undo)

		takeover := p
		takeover.Owner = "worker-c"
		takeover.LeaseTTL = time.Hour
		takeover.Undo = undo("undo_takeover")
		res, err = s.EffectClaim(ctx, takeover)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimTakeover, res.Outcome)
		require.Nil(t, res.Undo)

		busy := takeover
		busy.Owner = "worker-d"
		busy.Undo = undo("undo_busy")
		res, err = s.EffectClaim(ctx, busy)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimBusy, res.Outcome)
		require.Nil(t, res.Undo)

		list, err := s.UndoListBySession(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, []string{"undo_first"}, undoIDs(list))
	})

	t.Run("FailedPushRollsBackClaim", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		p.Undo = &ledger.UndoEntry{ID: "undo_taken", SessionID: "ses_a", CompensationTool: "refund"}
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)

		// Reusing the entry's ID makes the push fail after the effect row
		// was inserted; the effect must not survive without its undo.
		second := claimParams("worker-a", time.Hour)
		second.Undo = &ledger.UndoEntry{ID: "undo_taken", SessionID: "ses_a", CompensationTool: "refund"}
		_, err = s.EffectClaim(ctx, second)
		require.Error(t, err)

		_, err = s.EffectGet(ctx, second.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}

func testDeferred(t *testing.T, setup setupFunc) {
	t.Run("InsertIsIdempotent", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		d := ledger.DeferredItem{
			SessionID:    "ses_a",
			OperationKey: newKey(),
			Tool:         "crm.note",
			Args:         oddArgs,
			Reason:       "delivered after the call",
		}
		got, err := s.DeferredInsert(ctx, d)
		require.NoError(t, err)
		require.Regexp(t, `^def_[0-9a-f]{16}$`, got.ID)
		require.Equal(t, "ses_a", got.SessionID)
		require.Equal(t, d.OperationKey, got.OperationKey)
		require.Equal(t, "crm.note", got.Tool)
		require.Equal(t, string(oddArgs), string(got.Args))
		require.Equal(t, ledger.DeferredRecorded, got.Status)
		require.Nil(t, got.Receipt)
		require.Equal(t, "delivered after the call", got.Reason)
		requireRecent(t, got.CreatedAt)

		again := d
		again.ID = "def_other"
		again.Args = json.RawMessage(`{}`)
		dup, err := s.DeferredInsert(ctx, again)
		require.NoError(t, err)
		require.Equal(t, got, dup)

		list, err := s.DeferredListBySession(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, []ledger.DeferredItem{got}, list)
	})

	t.Run("ListBySession", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		var want []string
		for i := range 3 {
			d, err := s.DeferredInsert(ctx, ledger.DeferredItem{
				ID:           fmt.Sprintf("def_%d", i),
				SessionID:    "ses_a",
				OperationKey: newKey(),
				Tool:         "crm.note",
				Args:         json.RawMessage(`{}`),
				Status:       ledger.DeferredDelivered,
				Receipt:      newReceipt(fmt.Sprintf("N%d", i)),
			})
			require.NoError(t, err)
			require.Equal(t, ledger.DeferredDelivered, d.Status)
			require.Equal(t, newReceipt(fmt.Sprintf("N%d", i)), d.Receipt)
			want = append(want, d.ID)
		}
		list, err := s.DeferredListBySession(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, want, deferredIDs(list), "in the order recorded")

		none, err := s.DeferredListBySession(ctx, "ses_unknown")
		require.NoError(t, err)
		require.NotNil(t, none)
		require.Empty(t, none)
	})
}

func testApprovalRequest(t *testing.T, setup setupFunc) {
	timeout := time.Now().Add(15 * time.Minute).UTC().Truncate(time.Millisecond)
	newRequest := func() ledger.ApprovalRequest { return newApprovalRequest(timeout) }

	t.Run("InsertIsIdempotent", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		a := newRequest()
		got, err := s.ApprovalRequestInsert(ctx, a)
		require.NoError(t, err)
		require.Regexp(t, `^apr_[0-9a-f]{16}$`, got.ID)
		require.Equal(t, "inv_1", got.InvocationID)
		require.Equal(t, a.OperationKey, got.OperationKey)
		require.Equal(t, "ses_a", got.SessionID)
		require.Equal(t, "agent_1", got.AgentID)
		require.Equal(t, "payments.refund", got.Tool)
		require.Equal(t, string(oddArgs), string(got.Args), "frozen args round-trip byte for byte")
		require.Equal(t, hashOf(got.Args), got.ArgsHash)
		require.Equal(t, "finance", got.ApproverRole)
		require.Equal(t, a.Reason, got.Reason)
		require.Equal(t, []string{"money", "external"}, got.RiskTags)
		require.Equal(t, maestrotype.EffectMoney, got.Effect)
		require.Equal(t, maestrotype.ReversibilityCompensable, got.Reversibility)
		read, err := s.ApprovalRequestGet(ctx, got.ID)
		require.NoError(t, err)
		require.Equal(t, maestrotype.ReversibilityCompensable, read.Reversibility, "the classes are frozen with the request")
		require.JSONEq(t, string(a.Context), string(got.Context))
		require.Equal(t, ledger.ApprovalPending, got.Status)
		require.Equal(t, timeout, got.TimeoutAt)
		require.Empty(t, got.DecidedBy)
		require.Nil(t, got.DecidedAt)
		requireRecent(t, got.CreatedAt)

		again := newRequest()
		again.OperationKey = a.OperationKey
		again.ArgsHash = "different"
		dup, err := s.ApprovalRequestInsert(ctx, again)
		require.NoError(t, err)
		require.Equal(t, got, dup)

		byID, err := s.ApprovalRequestGet(ctx, got.ID)
		require.NoError(t, err)
		require.Equal(t, got, byID)
	})

	t.Run("ExpireClosesOnlyPendingRequests", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		got, err := s.ApprovalRequestInsert(ctx, newRequest())
		require.NoError(t, err)
		_, err = s.ApprovalRequestExpire(ctx, got.ID, ledger.ApprovalApproved)
		require.Error(t, err, "approval is a human decision, not a timeout outcome")

		expired, err := s.ApprovalRequestExpire(ctx, got.ID, ledger.ApprovalTimedOut)
		require.NoError(t, err)
		require.Equal(t, ledger.ApprovalTimedOut, expired.Status)
		require.Equal(t, "policy:timeout", expired.DecidedBy)
		require.NotNil(t, expired.DecidedAt)

		again, err := s.ApprovalRequestExpire(ctx, got.ID, ledger.ApprovalAutoApproved)
		require.NoError(t, err)
		require.Equal(t, ledger.ApprovalTimedOut, again.Status, "a closed request stays closed")

		byKey, err := s.ApprovalRequestGetByKey(ctx, got.OperationKey)
		require.NoError(t, err)
		require.Equal(t, expired, byKey)
	})

	t.Run("InsertDecided", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		decidedAt := time.Now().UTC().Truncate(time.Millisecond)
		a := newRequest()
		a.Status = ledger.ApprovalAutoApproved
		a.DecidedBy = "policy:own-number"
		a.DecidedAt = &decidedAt
		a.RiskTags = nil
		got, err := s.ApprovalRequestInsert(ctx, a)
		require.NoError(t, err)
		require.Equal(t, ledger.ApprovalAutoApproved, got.Status)
		require.Equal(t, "policy:own-number", got.DecidedBy)
		require.NotNil(t, got.DecidedAt)
		require.Equal(t, decidedAt, *got.DecidedAt)
		require.Empty(t, got.RiskTags)

		undecided := newRequest()
		undecided.Status = ledger.ApprovalApproved
		_, err = s.ApprovalRequestInsert(ctx, undecided)
		require.Error(t, err, "a decided request records when it was decided")
	})

	t.Run("InsertRefusesMissingTimeout", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		a := newRequest()
		a.TimeoutAt = time.Time{}
		_, err := s.ApprovalRequestInsert(ctx, a)
		require.Error(t, err)
	})

	t.Run("List", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		var pending []string
		for range 3 {
			a, err := s.ApprovalRequestInsert(ctx, newRequest())
			require.NoError(t, err)
			pending = append(pending, a.ID)
		}
		now := time.Now()
		rejected := newRequest()
		rejected.Status = ledger.ApprovalRejected
		rejected.DecidedBy = "ops@example.com"
		rejected.DecidedAt = &now
		r, err := s.ApprovalRequestInsert(ctx, rejected)
		require.NoError(t, err)

		got, err := s.ApprovalRequestList(ctx, ledger.ApprovalPending, 0)
		require.NoError(t, err)
		require.Equal(t, pending, approvalIDs(got), "oldest first")

		got, err = s.ApprovalRequestList(ctx, ledger.ApprovalPending, 2)
		require.NoError(t, err)
		require.Equal(t, pending[:2], approvalIDs(got))

		got, err = s.ApprovalRequestList(ctx, "", 0)
		require.NoError(t, err)
		require.Equal(t, append(pending, r.ID), approvalIDs(got), "every status")

		got, err = s.ApprovalRequestList(ctx, ledger.ApprovalTimedOut, 0)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Empty(t, got)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.ApprovalRequestGet(ctx, "apr_missing")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}

func testToolRegistry(t *testing.T, setup setupFunc) {
	lookup := ledger.ToolRegistryRow{
		Name: "crm.lookup", Effect: maestrotype.EffectRead, Delivery: maestrotype.DeliveryReadonly,
		Reversibility: maestrotype.ReversibilityNone, ConnectorKind: "http", Owner: "crm", CatalogHash: "h1",
	}
	sms := ledger.ToolRegistryRow{
		Name: "sms.send", Effect: maestrotype.EffectWrite, Delivery: maestrotype.DeliveryRealSync,
		Reversibility: maestrotype.ReversibilityCompensable, CompensationTool: "sms.retract",
		ConnectorKind: "twilio", Owner: "comms", CatalogHash: "h1",
	}
	refund := ledger.ToolRegistryRow{
		Name: "payments.refund", Effect: maestrotype.EffectMoney, Delivery: maestrotype.DeliveryRealSync,
		Reversibility: maestrotype.ReversibilityIrreversible, ApproverRole: "finance",
		ConnectorKind: "http", Owner: "payments", CatalogHash: "h1",
	}

	t.Run("SyncReplacesTheSet", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{sms, lookup, refund}))
		got, err := s.ToolRegistryList(ctx)
		require.NoError(t, err)
		require.Equal(t, []ledger.ToolRegistryRow{lookup, refund, sms}, got, "ordered by name")

		sms2 := sms
		sms2.CatalogHash = "h2"
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{sms2}))
		got, err = s.ToolRegistryList(ctx)
		require.NoError(t, err)
		require.Equal(t, []ledger.ToolRegistryRow{sms2}, got)

		require.NoError(t, s.ToolRegistrySync(ctx, nil))
		got, err = s.ToolRegistryList(ctx)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Empty(t, got)
	})

	t.Run("HistoryIsAppendedNeverRewritten", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{sms, refund}))
		asWrite := refund
		asWrite.Effect, asWrite.ApproverRole, asWrite.CatalogHash = maestrotype.EffectWrite, "", "h2"
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{asWrite}))
		// Back to the first catalog: its version is already recorded.
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{sms, refund}))
		require.NoError(t, s.ToolRegistrySync(ctx, nil))

		got, err := s.ToolRegistryList(ctx)
		require.NoError(t, err)
		require.Empty(t, got, "the mirror holds the current catalog only")
		history, err := s.ToolRegistryHistory(ctx, refund.Name)
		require.NoError(t, err)
		require.Equal(t, []ledger.ToolRegistryRow{refund, asWrite}, history, "oldest first, one row per catalog version")
		history, err = s.ToolRegistryHistory(ctx, sms.Name)
		require.NoError(t, err)
		require.Equal(t, []ledger.ToolRegistryRow{sms}, history)
		history, err = s.ToolRegistryHistory(ctx, "never.synced")
		require.NoError(t, err)
		require.Empty(t, history)
	})

	t.Run("CatalogActivateRecordsEachVersionAndTheCurrentOne", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.CatalogCurrent(ctx)
		require.ErrorIs(t, err, ledger.ErrNotFound, "no version before the first activation")
		v1 := ledger.CatalogVersion{Version: "h1", Source: []byte("version: 1\n")}
		require.NoError(t, s.CatalogActivate(ctx, v1, []ledger.ToolRegistryRow{lookup, sms}))
		sms2 := sms
		sms2.CatalogHash = "h2"
		v2 := ledger.CatalogVersion{Version: "h2", Source: []byte("version: 1\n# two\n")}
		require.NoError(t, s.CatalogActivate(ctx, v2, []ledger.ToolRegistryRow{sms2}))

		current, err := s.CatalogCurrent(ctx)
		require.NoError(t, err)
		require.Equal(t, "h2", current)
		got, err := s.ToolRegistryList(ctx)
		require.NoError(t, err)
		require.Equal(t, []ledger.ToolRegistryRow{sms2}, got)
		src, err := s.CatalogVersionSource(ctx, "h1")
		require.NoError(t, err)
		require.Equal(t, v1.Source, src, "an earlier version's file stays readable")
		_, err = s.CatalogVersionSource(ctx, "h9")
		require.ErrorIs(t, err, ledger.ErrNotFound)

		// Back to v1: current again, its file as first recorded.
		require.NoError(t, s.CatalogActivate(ctx, ledger.CatalogVersion{Version: "h1", Source: []byte("other")}, []ledger.ToolRegistryRow{lookup}))
		current, err = s.CatalogCurrent(ctx)
		require.NoError(t, err)
		require.Equal(t, "h1", current)
		src, err = s.CatalogVersionSource(ctx, "h1")
		require.NoError(t, err)
		require.Equal(t, v1.Source, src)

		// A row of another version is refused and changes nothing.
		err = s.CatalogActivate(ctx, v2, []ledger.ToolRegistryRow{lookup})
		require.ErrorContains(t, err, `"crm.lookup" is of version "h1"`)
		current, err = s.CatalogCurrent(ctx)
		require.NoError(t, err)
		require.Equal(t, "h1", current)
		require.Error(t, s.CatalogActivate(ctx, ledger.CatalogVersion{Version: "h3"}, nil), "a version needs its file")

		// The history: each activation, newest first; a refused one and a
		// repeat of the current version add nothing.
		require.NoError(t, s.CatalogActivate(ctx, v1, []ledger.ToolRegistryRow{lookup}))
		history, err := s.CatalogActivationList(ctx, 10)
		require.NoError(t, err)
		var versions []string
		for _, a := range history {
			versions = append(versions, a.Version)
			require.False(t, a.ActivatedAt.IsZero())
		}
		require.Equal(t, []string{"h1", "h2", "h1"}, versions)
		require.False(t, history[0].ActivatedAt.Before(history[1].ActivatedAt))
		history, err = s.CatalogActivationList(ctx, 1)
		require.NoError(t, err)
		require.Len(t, history, 1)
		require.Equal(t, "h1", history[0].Version)
	})

	t.Run("SyncRefusesARowWithoutCatalogHash", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{lookup}))
		unversioned := sms
		unversioned.CatalogHash = ""
		err := s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{refund, unversioned})
		require.ErrorContains(t, err, `"sms.send" has no catalog hash`)
		got, err := s.ToolRegistryList(ctx)
		require.NoError(t, err)
		require.Equal(t, []ledger.ToolRegistryRow{lookup}, got)
	})

	// Processes starting together each mirror their catalog; none may
	// fail on the rows another is writing.
	t.Run("ConcurrentSyncsAllSucceed", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		rows := []ledger.ToolRegistryRow{lookup, refund, sms}
		errs := make(chan error, 8)
		var wg sync.WaitGroup
		for range cap(errs) {
			wg.Go(func() { errs <- s.ToolRegistrySync(ctx, rows) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		got, err := s.ToolRegistryList(ctx)
		require.NoError(t, err)
		require.Equal(t, rows, got)
	})

	t.Run("RefusedRowKeepsTheOldSet", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{lookup}))

		bad := sms
		bad.CompensationTool = ""
		err := s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{refund, bad})
		require.Error(t, err)
		require.ErrorContains(t, err, `"sms.send"`, "the error names the row")

		got, err := s.ToolRegistryList(ctx)
		require.NoError(t, err)
		require.Equal(t, []ledger.ToolRegistryRow{lookup}, got)
	})
}

func testRefusal(t *testing.T, setup setupFunc) {
	t.Run("InsertThenList", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		refusals := []ledger.Refusal{
			{AgentID: "agent_1", SessionID: "ses_a", Tool: "wire.transfer", OperationKey: "op_1",
				Code: maestrotype.CodeToolNotAllowed, Detail: "not on the allowlist"},
			{Tool: "sms.send", Code: maestrotype.CodeUnauthorized},
			{SessionID: "ses_a", Tool: "sms.send", OperationKey: "op_2",
				Code: maestrotype.CodeInvalidArgs, Detail: "to: required"},
		}
		for _, r := range refusals {
			require.NoError(t, s.RefusalInsert(ctx, r))
		}

		got, err := s.RefusalList(ctx, 0)
		require.NoError(t, err)
		require.Len(t, got, 3)
		for i, r := range got {
			want := refusals[len(refusals)-1-i]
			require.Positive(t, r.ID)
			requireRecent(t, r.CreatedAt)
			want.ID, want.CreatedAt = r.ID, r.CreatedAt
			require.Equal(t, want, r, "newest first")
		}
		require.Greater(t, got[0].ID, got[1].ID)

		got, err = s.RefusalList(ctx, 2)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, maestrotype.CodeInvalidArgs, got[0].Code)
	})

	t.Run("ListEmpty", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		got, err := s.RefusalList(ctx, 10)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Empty(t, got)
	})
}

func newKey() string { return "op_" + randomHex(8) }

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func newInvocation(sessionID string) ledger.Invocation {
	key := newKey()
	return ledger.Invocation{
		OperationKey: key,
		SessionID:    sessionID,
		AgentID:      "agent_1",
		Tool:         "sms.send",
		Args:         oddArgs,
		ArgsHash:     hashOf(oddArgs),
		Route:        maestrotype.RouteCompensable,
		State:        maestrotype.InvocationRunning,
		WorkflowID:   "wf_" + key,
	}
}

func claimParams(owner string, ttl time.Duration) ledger.EffectClaimParams {
	return ledger.EffectClaimParams{
		OperationKey: newKey(),
		InvocationID: "inv_1",
		Tool:         "sms.send",
		PayloadHash:  hashOf(oddArgs),
		Owner:        owner,
		LeaseTTL:     ttl,
		BeforeState:  json.RawMessage(`{"messages":0}`),
	}
}

// newApprovalRequest returns a pending request for a refund of oddArgs
// under a fresh operation key.
func newApprovalRequest(timeout time.Time) ledger.ApprovalRequest {
	return ledger.ApprovalRequest{
		InvocationID:  "inv_1",
		OperationKey:  newKey(),
		SessionID:     "ses_a",
		AgentID:       "agent_1",
		Tool:          "payments.refund",
		Args:          oddArgs,
		ArgsHash:      hashOf(oddArgs),
		ApproverRole:  "finance",
		Reason:        "money always needs a human",
		RiskTags:      []string{"money", "external"},
		Effect:        maestrotype.EffectMoney,
		Reversibility: maestrotype.ReversibilityCompensable,
		Context:       json.RawMessage(`{"recent":["crm.lookup"]}`),
		TimeoutAt:     timeout,
	}
}

func newReceipt(id string) *maestrotype.Receipt {
	return &maestrotype.Receipt{
		Provider: "twilio",
		ID:       id,
		Status:   "queued",
		Fields:   map[string]string{maestrotype.ReceiptMessageSID: id},
		IssuedAt: time.Date(2030, 1, 2, 3, 4, 5, 6_000_000, time.UTC),
	}
}

// requireRecent checks a database-stamped time: UTC, and close to this
// machine's clock (the database may run elsewhere, hence the slack).
func requireRecent(t *testing.T, got time.Time) {
	t.Helper()
	require.Equal(t, time.UTC, got.Location())
	require.WithinDuration(t, time.Now(), got, time.Minute)
}

// requireJSONEq compares values by their JSON, since a JSON column may
// reformat nested raw JSON.
func requireJSONEq(t *testing.T, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(w), string(g))
}

func ids[T any](rows []T, id func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

func invocationIDs(rows []ledger.Invocation) []string {
	return ids(rows, func(r ledger.Invocation) string { return r.ID })
}

func effectKeys(rows []ledger.Effect) []string {
	return ids(rows, func(r ledger.Effect) string { return r.OperationKey })
}

func undoIDs(rows []ledger.UndoEntry) []string {
	return ids(rows, func(r ledger.UndoEntry) string { return r.ID })
}

func deferredIDs(rows []ledger.DeferredItem) []string {
	return ids(rows, func(r ledger.DeferredItem) string { return r.ID })
}

func approvalIDs(rows []ledger.ApprovalRequest) []string {
	return ids(rows, func(r ledger.ApprovalRequest) string { return r.ID })
}
