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
