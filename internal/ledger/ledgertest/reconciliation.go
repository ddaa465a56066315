package ledgertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

func testReconciliation(t *testing.T, setup setupFunc) {
	t.Run("OwnerSettlesWithTheFinding", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		result := &maestrotype.Observation{Status: maestrotype.StatusSuccess, Summary: "found at the provider"}
		got, err := s.EffectReconcile(ctx, ledger.EffectReconcileParams{
			OperationKey: p.OperationKey,
			Owner:        "worker-a",
			Status:       maestrotype.EffectSucceeded,
			Receipt:      newReceipt("SM1"),
			Result:       result,
			Event: ledger.ReconciliationEvent{
				Kind: ledger.ReconciliationAdopted, Actor: "reconciler:worker-a", Reason: "one match", Receipt: newReceipt("SM1"),
			},
		})
		require.NoError(t, err)
		require.Equal(t, maestrotype.EffectSucceeded, got.Status)
		require.Equal(t, newReceipt("SM1"), got.Receipt)
		requireJSONEq(t, result, got.Result)

		events, err := s.ReconciliationEventList(ctx, p.OperationKey)
		require.NoError(t, err)
		require.Len(t, events, 1)
		e := events[0]
		require.Equal(t, p.OperationKey, e.OperationKey)
		require.Equal(t, ledger.ReconciliationAdopted, e.Kind)
		require.Equal(t, "reconciler:worker-a", e.Actor)
		require.Equal(t, "one match", e.Reason)
		require.Equal(t, newReceipt("SM1"), e.Receipt)
		requireRecent(t, e.CreatedAt)
	})

	t.Run("OwnerMustHoldTheLease", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		_, err = s.EffectReconcile(ctx, escalation(p.OperationKey, "worker-b"))
		require.ErrorIs(t, err, ledger.ErrLeaseLost)
		requireEvents(t, ctx, s, p.OperationKey, nil, "a refused change logs nothing")

		_, err = s.EffectReconcile(ctx, escalation(p.OperationKey, "worker-a"))
		require.NoError(t, err)
		_, err = s.EffectReconcile(ctx, escalation(p.OperationKey, "worker-a"))
		require.ErrorIs(t, err, ledger.ErrLeaseLost, "already settled")
		requireEvents(t, ctx, s, p.OperationKey, []ledger.ReconciliationKind{ledger.ReconciliationEscalated})
	})

	t.Run("DecisionSettlesAHeldEffectAndItsInvocation", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_r"))
		require.NoError(t, err)
		p := claimParams("worker-a", time.Hour)
		p.OperationKey, p.InvocationID = inv.OperationKey, inv.ID
		_, err = s.EffectClaim(ctx, p)
		require.NoError(t, err)
		_, err = s.EffectReconcile(ctx, escalation(p.OperationKey, "worker-a"))
		require.NoError(t, err)

		attested := &maestrotype.Receipt{Provider: "human-attested", ID: "att_1", Fields: map[string]string{maestrotype.ReceiptAttestedBy: "operator:ops"}}
		result := &maestrotype.Observation{Status: maestrotype.StatusWarning, Summary: "attested"}
		got, err := s.EffectReconcile(ctx, ledger.EffectReconcileParams{
			OperationKey:    p.OperationKey,
			Status:          maestrotype.EffectSucceeded,
			Receipt:         attested,
			Result:          result,
			InvocationState: maestrotype.InvocationSucceeded,
			Event: ledger.ReconciliationEvent{
				Kind: ledger.ReconciliationDelivered, Actor: "operator:ops", Reason: "seen in the outbox", Receipt: attested,
			},
		})
		require.NoError(t, err)
		require.Equal(t, maestrotype.EffectSucceeded, got.Status)
		require.Equal(t, attested, got.Receipt)
		require.Empty(t, got.Error, "the decision replaces why the outcome was unknown")
		require.JSONEq(t, `{"messages":0}`, string(got.BeforeState), "what was about to be sent is kept")

		stored, err := s.InvocationGet(ctx, inv.ID)
		require.NoError(t, err)
		require.Equal(t, maestrotype.InvocationSucceeded, stored.State)
		requireJSONEq(t, result, stored.Observation)
		requireEvents(t, ctx, s, p.OperationKey, []ledger.ReconciliationKind{ledger.ReconciliationEscalated, ledger.ReconciliationDelivered})

		// A second decision, from another operator racing the first, moves
		// nothing and says what the effect is now.
		again, err := s.EffectReconcile(ctx, ledger.EffectReconcileParams{
			OperationKey: p.OperationKey,
			Status:       maestrotype.EffectFailed,
			Result:       result,
			Event:        ledger.ReconciliationEvent{Kind: ledger.ReconciliationNotDelivered, Actor: "operator:other", Reason: "late"},
		})
		require.ErrorIs(t, err, ledger.ErrEffectNotHeld)
		require.Equal(t, maestrotype.EffectSucceeded, again.Status)
		requireEvents(t, ctx, s, p.OperationKey, []ledger.ReconciliationKind{ledger.ReconciliationEscalated, ledger.ReconciliationDelivered})
	})

	t.Run("DecisionNeedsAHeldEffect", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		decide := ledger.EffectReconcileParams{
			OperationKey: p.OperationKey,
			Status:       maestrotype.EffectFailed,
			Event:        ledger.ReconciliationEvent{Kind: ledger.ReconciliationNotDelivered, Actor: "operator:ops", Reason: "r"},
		}
		got, err := s.EffectReconcile(ctx, decide)
		require.ErrorIs(t, err, ledger.ErrEffectNotHeld, "an attempt is still running")
		require.Equal(t, maestrotype.EffectInProgress, got.Status)

		decide.OperationKey = "op_missing"
		_, err = s.EffectReconcile(ctx, decide)
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})

	t.Run("RefusesInvalidParams", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		p := claimParams("worker-a", time.Hour)
		_, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		event := ledger.ReconciliationEvent{Kind: ledger.ReconciliationNotDelivered, Actor: "operator:ops", Reason: "r"}
		for name, params := range map[string]ledger.EffectReconcileParams{
			"no event reason": {OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectFailed,
				Event: ledger.ReconciliationEvent{Kind: ledger.ReconciliationEscalated, Actor: "a"}},
			"held to held": {OperationKey: p.OperationKey, Status: maestrotype.EffectNeedsReconciliation, Event: event},
			"non-final":    {OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectInProgress, Event: event},
			"no result":    {OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectFailed, InvocationState: maestrotype.InvocationFailed, Event: event},
			"adopted, no receipt": {OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectSucceeded,
				Event: ledger.ReconciliationEvent{Kind: ledger.ReconciliationAdopted, Actor: "a", Reason: "r"}},
		} {
			_, err := s.EffectReconcile(ctx, params)
			require.Error(t, err, name)
		}
		got, err := s.EffectGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.Equal(t, maestrotype.EffectInProgress, got.Status, "nothing moved")
		requireEvents(t, ctx, s, p.OperationKey, nil)
	})

	t.Run("EventInsertTakesOnlyFindingsThatChangeNothing", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		key := newKey()
		for _, kind := range []ledger.ReconciliationKind{ledger.ReconciliationAbsent, ledger.ReconciliationReplayed} {
			e, err := s.ReconciliationEventInsert(ctx, ledger.ReconciliationEvent{OperationKey: key, Kind: kind, Actor: "reconciler:a", Reason: "r"})
			require.NoError(t, err)
			require.Positive(t, e.ID)
			require.Nil(t, e.Receipt)
		}
		_, err := s.ReconciliationEventInsert(ctx, ledger.ReconciliationEvent{OperationKey: key, Kind: ledger.ReconciliationDelivered, Actor: "operator:ops", Reason: "r"})
		require.Error(t, err, "a decision is logged only with the change it makes")
		requireEvents(t, ctx, s, key, []ledger.ReconciliationKind{ledger.ReconciliationAbsent, ledger.ReconciliationReplayed})
	})

	t.Run("ListByReceiptID", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		// The same ID from two providers: a Twilio message and an HTTP
		// service's resource.
		var keys []string
		for _, r := range []*maestrotype.Receipt{newReceipt("SM_shared"), httpReceipt("SM_shared")} {
			p := claimParams("worker-a", time.Hour)
			_, err := s.EffectClaim(ctx, p)
			require.NoError(t, err)
			require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
				OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectSucceeded, Receipt: r,
			}))
			keys = append(keys, p.OperationKey)
		}
		got, err := s.EffectListByReceiptID(ctx, "SM_shared")
		require.NoError(t, err)
		require.Equal(t, keys, effectKeys(got))

		none, err := s.EffectListByReceiptID(ctx, "SM_other")
		require.NoError(t, err)
		require.Empty(t, none)
		require.NotNil(t, none)
	})
}

func escalation(key, owner string) ledger.EffectReconcileParams {
	return ledger.EffectReconcileParams{
		OperationKey: key,
		Owner:        owner,
		Status:       maestrotype.EffectNeedsReconciliation,
		Result:       &maestrotype.Observation{Status: maestrotype.StatusPending, Summary: "held"},
		Error:        "cannot be searched",
		Event:        ledger.ReconciliationEvent{Kind: ledger.ReconciliationEscalated, Actor: "reconciler:" + owner, Reason: "cannot be searched"},
	}
}

func requireEvents(t *testing.T, ctx context.Context, s ledger.Store, key string, want []ledger.ReconciliationKind, msgAndArgs ...any) {
	t.Helper()
	events, err := s.ReconciliationEventList(ctx, key)
	require.NoError(t, err)
	got := []ledger.ReconciliationKind{}
	for _, e := range events {
		got = append(got, e.Kind)
	}
	if want == nil {
		want = []ledger.ReconciliationKind{}
	}
	require.Equal(t, want, got, msgAndArgs...)
}
