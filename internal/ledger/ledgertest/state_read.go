package ledgertest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

func stateRead(source, state string) maestrotype.StateRead {
	return maestrotype.StateRead{Source: source, Found: true, State: json.RawMessage(state),
		ReadAt: time.Date(2026, 12, 2, 6, 30, 0, 0, time.UTC)}
}

func testEffectStateReads(t *testing.T, setup setupFunc) {
	t.Run("RecordedWithANewClaim", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		// A new claim records the before read made for it, in one write.
		before := stateRead("tool lookup_tenant", `{"id":"t_1","deleted":false}`)
		p := claimParams("worker-a", time.Hour)
		p.BeforeRead = &before
		got, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimNew, got.Outcome)
		reads, err := s.EffectStateReadsGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.NotNil(t, reads.Before)
		require.JSONEq(t, `{"id":"t_1","deleted":false}`, string(reads.Before.State))
		require.ErrorIs(t, s.EffectRecordBeforeRead(ctx, p.OperationKey, "worker-a", before), ledger.ErrLeaseLost,
			"a before read is recorded once")

		// A claim that takes the key over keeps the read recorded first.
		require.NoError(t, s.EffectHandOver(ctx, p.OperationKey, "worker-a", "worker-b", time.Hour))
		later := stateRead("tool lookup_tenant", `{"id":"t_1","deleted":true}`)
		q := claimParams("worker-b", time.Hour)
		q.OperationKey, q.BeforeRead = p.OperationKey, &later
		got, err = s.EffectClaim(ctx, q)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimTakeover, got.Outcome)
		reads, err = s.EffectStateReadsGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.JSONEq(t, `{"id":"t_1","deleted":false}`, string(reads.Before.State))

		// So does a claim with a spend, pipelined or not.
		req := insertRuleApproved(t, ctx, s)
		r := claimParams("worker-a", time.Hour)
		r.PayloadHash = req.ArgsHash
		r.BeforeRead = &before
		r.Spend = &ledger.ApprovalSpend{ApprovalID: req.ID, UsedBy: "invocation:" + req.InvocationID, MintTTL: time.Hour}
		got, err = s.EffectClaim(ctx, r)
		require.NoError(t, err)
		require.NoError(t, got.Spend)
		require.Equal(t, ledger.ClaimNew, got.Outcome)
		reads, err = s.EffectStateReadsGet(ctx, r.OperationKey)
		require.NoError(t, err)
		require.NotNil(t, reads.Before)
		require.True(t, reads.Before.Found)
	})

	t.Run("RecordedWithTheEffect", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_reads"))
		require.NoError(t, err)
		p := claimParams("worker-a", time.Hour)
		p.OperationKey = inv.OperationKey
		p.InvocationID = inv.ID
		_, err = s.EffectClaim(ctx, p)
		require.NoError(t, err)

		before := stateRead("tool lookup_tenant", `{"id":"t_1","deleted":false}`)
		require.ErrorIs(t, s.EffectRecordBeforeRead(ctx, p.OperationKey, "worker-b", before), ledger.ErrLeaseLost, "not the holder")
		require.NoError(t, s.EffectRecordBeforeRead(ctx, p.OperationKey, "worker-a", before))
		require.ErrorIs(t, s.EffectRecordBeforeRead(ctx, p.OperationKey, "worker-a", stateRead("x", `{}`)), ledger.ErrLeaseLost,
			"a before read is recorded once")

		// Nothing to read back until the effect succeeded.
		after := stateRead("tool lookup_tenant", `{"id":"t_1","deleted":true}`)
		_, recorded, err := s.EffectRecordAfterRead(ctx, p.OperationKey, after)
		require.NoError(t, err)
		require.False(t, recorded)
		require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectSucceeded}))
		_, recorded, err = s.EffectRecordAfterRead(ctx, p.OperationKey, after)
		require.NoError(t, err)
		require.True(t, recorded)
		failed := maestrotype.StateRead{Source: "tool lookup_tenant", Error: "down", ReadAt: time.Now().UTC()}
		_, recorded, err = s.EffectRecordAfterRead(ctx, p.OperationKey, failed)
		require.NoError(t, err)
		require.False(t, recorded, "the first read-back is kept")

		got, err := s.EffectStateReadsGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.Equal(t, p.OperationKey, got.OperationKey)
		require.JSONEq(t, `{"id":"t_1","deleted":false}`, string(got.Before.State))
		require.True(t, got.Before.Found)
		require.Equal(t, before.ReadAt, got.Before.ReadAt.UTC())
		require.JSONEq(t, `{"id":"t_1","deleted":true}`, string(got.After.State))
		require.Empty(t, got.After.Error)

		// The request sent and the provider's answer are kept beside them.
		eff, err := s.EffectGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.JSONEq(t, `{"messages":0}`, string(eff.BeforeState))

		list, err := s.EffectStateReadsListBySession(ctx, "ses_reads")
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, got, list[0])
	})

	t.Run("ReadBackRecordedWithTheSettle", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_settle_reads"))
		require.NoError(t, err)
		p := claimParams("worker-a", time.Hour)
		p.OperationKey, p.InvocationID = inv.OperationKey, inv.ID
		before := stateRead("tool lookup_tenant", `{"id":"t_1","deleted":false}`)
		p.BeforeRead = &before
		_, err = s.EffectClaim(ctx, p)
		require.NoError(t, err)

		after := stateRead("tool lookup_tenant", `{"id":"t_1","deleted":true}`)
		obs := maestrotype.Observation{Status: maestrotype.StatusSuccess, Summary: "done"}
		settle := ledger.EffectSettleParams{OperationKey: p.OperationKey, Owner: "worker-a",
			Status: maestrotype.EffectFailed, Result: &obs, AfterRead: &after}
		finish := ledger.InvocationFinishParams{InvocationID: inv.ID, State: maestrotype.InvocationSucceeded, Observation: obs}
		_, err = s.EffectSettleFinish(ctx, settle, finish)
		require.ErrorContains(t, err, "only with a succeeded effect", "a failed effect has nothing to read back")

		settle.Status = maestrotype.EffectSucceeded
		fin, err := s.EffectSettleFinish(ctx, settle, finish)
		require.NoError(t, err)
		require.NotNil(t, fin.StateReads, "the settle hands back the reads it recorded")
		require.Equal(t, p.OperationKey, fin.StateReads.OperationKey)
		require.JSONEq(t, `{"id":"t_1","deleted":false}`, string(fin.StateReads.Before.State))
		require.JSONEq(t, `{"id":"t_1","deleted":true}`, string(fin.StateReads.After.State))

		got, err := s.EffectStateReadsGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.Equal(t, *fin.StateReads, got, "what the settle returned is what it stored")
		_, recorded, err := s.EffectRecordAfterRead(ctx, p.OperationKey, stateRead("x", `{}`))
		require.NoError(t, err)
		require.False(t, recorded, "the read-back recorded with the settle is the one kept")

		// A settle without a read-back returns none and records none.
		inv2, _, err := s.InvocationInsert(ctx, newInvocation("ses_settle_reads"))
		require.NoError(t, err)
		q := claimParams("worker-a", time.Hour)
		q.OperationKey, q.InvocationID = inv2.OperationKey, inv2.ID
		_, err = s.EffectClaim(ctx, q)
		require.NoError(t, err)
		fin, err = s.EffectSettleFinish(ctx,
			ledger.EffectSettleParams{OperationKey: q.OperationKey, Owner: "worker-a", Status: maestrotype.EffectSucceeded, Result: &obs},
			ledger.InvocationFinishParams{InvocationID: inv2.ID, State: maestrotype.InvocationSucceeded, Observation: obs})
		require.NoError(t, err)
		require.Nil(t, fin.StateReads)
		got, err = s.EffectStateReadsGet(ctx, q.OperationKey)
		require.NoError(t, err)
		require.Nil(t, got.After)
	})

	t.Run("EffectWithoutReads", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_plain"))
		require.NoError(t, err)
		p := claimParams("worker-a", time.Hour)
		p.OperationKey = inv.OperationKey
		p.InvocationID = inv.ID
		_, err = s.EffectClaim(ctx, p)
		require.NoError(t, err)

		got, err := s.EffectStateReadsGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.Nil(t, got.Before)
		require.Nil(t, got.After)
		list, err := s.EffectStateReadsListBySession(ctx, "ses_plain")
		require.NoError(t, err)
		require.Empty(t, list)
		_, err = s.EffectStateReadsGet(ctx, "op_missing")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}
