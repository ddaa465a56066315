package ledgertest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

// testEffectFold covers the claim that spends an approval token in its
// transaction and the settle that records the invocation's outcome with it.
func testEffectFold(t *testing.T, setup setupFunc) {
	t.Run("ClaimMintsAndSpendsAPolicyToken", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := insertRuleApproved(t, ctx, s)
		spender := "invocation:" + req.InvocationID
		p := claimParams("worker-a", time.Hour)
		p.PayloadHash = req.ArgsHash
		p.Spend = &ledger.ApprovalSpend{ApprovalID: req.ID, UsedBy: spender, MintTTL: time.Hour}

		got, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.NoError(t, got.Spend)
		require.Equal(t, ledger.ClaimNew, got.Outcome)

		// A retry of the same spender finds its own spend and the claim.
		p.Owner = "worker-b"
		again, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.NoError(t, again.Spend)
		require.Equal(t, ledger.ClaimBusy, again.Outcome)

		// Anyone else is refused, and claims nothing.
		other := claimParams("worker-c", time.Hour)
		other.PayloadHash = req.ArgsHash
		other.Spend = &ledger.ApprovalSpend{ApprovalID: req.ID, UsedBy: "invocation:other", MintTTL: time.Hour}
		refused, err := s.EffectClaim(ctx, other)
		require.NoError(t, err)
		require.ErrorIs(t, refused.Spend, ledger.ErrTokenUsed)
		require.Equal(t, spender, refused.Token.UsedBy)
		_, err = s.EffectGet(ctx, other.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound)

		requireEventKinds(t, s, req.ID, []ledger.ApprovalEventKind{
			ledger.ApprovalEventRequested, ledger.ApprovalEventAutoApproved, ledger.ApprovalEventTokenMinted,
			ledger.ApprovalEventTokenUsed, ledger.ApprovalEventTokenRefused, ledger.ApprovalEventTokenRefused,
		})

		// The mint and the spend are logged as a mint and a spend of their
		// own would log them, to the character.
		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		tok := refused.Token
		minted, err := json.Marshal(map[string]any{"token_id": tok.ID, "expires_at": tok.ExpiresAt})
		require.NoError(t, err)
		require.Equal(t, req.DecidedBy, events[2].Actor)
		require.Equal(t, req.ArgsHash, events[2].ArgsHashBefore)
		require.JSONEq(t, string(minted), string(events[2].Detail))
		require.Equal(t, spender, events[3].Actor)
		require.Equal(t, req.ArgsHash, events[3].ArgsHashBefore)
		require.JSONEq(t, `{"token_id":"`+tok.ID+`"}`, string(events[3].Detail))
	})

	t.Run("ClaimSupersedesAnUnspentPolicyToken", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		// A token minted before the claim is superseded by the claim's own,
		// and the log says which.
		req := insertRuleApproved(t, ctx, s)
		earlier, err := s.ApprovalTokenMint(ctx, req.ID, time.Hour, req.DecidedBy)
		require.NoError(t, err)
		p := claimParams("worker-a", time.Hour)
		p.PayloadHash = req.ArgsHash
		p.Spend = &ledger.ApprovalSpend{ApprovalID: req.ID, UsedBy: "invocation:" + req.InvocationID, MintTTL: time.Hour}

		got, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.NoError(t, got.Spend)
		require.Equal(t, ledger.ClaimNew, got.Outcome)
		requireEventKinds(t, s, req.ID, []ledger.ApprovalEventKind{
			ledger.ApprovalEventRequested, ledger.ApprovalEventAutoApproved, ledger.ApprovalEventTokenMinted,
			ledger.ApprovalEventTokenMinted, ledger.ApprovalEventTokenUsed,
		})
		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Contains(t, string(events[3].Detail), earlier.ID)
	})

	t.Run("ClaimSpendIsBoundToThePayload", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		approve(t, ctx, s, req.ID, time.Hour)
		p := claimParams("worker-a", time.Hour)
		p.PayloadHash = hashOf([]byte(`{"other":"args"}`))
		p.Spend = &ledger.ApprovalSpend{ApprovalID: req.ID, UsedBy: "invocation:x"}

		// Other arguments than the approved ones: the request comes back
		// for the caller to resolve, and nothing is written.
		got, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.NoError(t, got.Spend)
		require.NotNil(t, got.Approval)
		require.Equal(t, req.ArgsHash, got.Approval.ArgsHash)
		_, err = s.EffectGet(ctx, p.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound)
		requireEventKinds(t, s, req.ID, []ledger.ApprovalEventKind{
			ledger.ApprovalEventRequested, ledger.ApprovalEventApproved, ledger.ApprovalEventTokenMinted,
		})

		// So does a request still pending.
		pending := openRequest(t, ctx, s)
		q := claimParams("worker-a", time.Hour)
		q.PayloadHash = pending.ArgsHash
		q.Spend = &ledger.ApprovalSpend{ApprovalID: pending.ID, UsedBy: "invocation:y"}
		got, err = s.EffectClaim(ctx, q)
		require.NoError(t, err)
		require.NotNil(t, got.Approval)
		require.Equal(t, ledger.ApprovalPending, got.Approval.Status)
		_, err = s.EffectGet(ctx, q.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound)

		p.PayloadHash = req.ArgsHash
		got, err = s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.NoError(t, got.Spend)
		require.Equal(t, ledger.ClaimNew, got.Outcome)
	})

	t.Run("SettleFinishRecordsBothOrNeither", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		inv, _, err := s.InvocationInsert(ctx, newInvocation(""))
		require.NoError(t, err)
		p := claimParams("worker-a", time.Hour)
		p.OperationKey, p.InvocationID = inv.OperationKey, inv.ID
		_, err = s.EffectClaim(ctx, p)
		require.NoError(t, err)

		obs := maestrotype.Observation{Status: maestrotype.StatusSuccess, Summary: "sent"}
		back := maestrotype.Observation{Status: maestrotype.StatusSuccess, Summary: "sent; rolling back"}
		settle := ledger.EffectSettleParams{
			OperationKey: p.OperationKey, Owner: "worker-b", Status: maestrotype.EffectSucceeded,
			Receipt: newReceipt("SM1"), Result: &obs,
		}
		finish := ledger.InvocationFinishParams{
			InvocationID: inv.ID, State: maestrotype.InvocationSucceeded, Observation: obs, RollingBack: &back,
		}
		_, err = s.EffectSettleFinish(ctx, settle, finish)
		require.ErrorIs(t, err, ledger.ErrLeaseLost, "another owner")
		got, err := s.InvocationGet(ctx, inv.ID)
		require.NoError(t, err)
		require.Equal(t, maestrotype.InvocationRunning, got.State, "a lost lease records nothing")

		settle.Owner = "worker-a"
		finish.MessageProvider = "twilio"
		finish.Observation.Receipt = newReceipt("SM1")
		_, _, err = s.MessageStatusRecord(ctx, ledger.MessageStatusReport{Provider: "twilio", MessageID: "SM1", Status: maestrotype.MessageQueued})
		require.NoError(t, err)
		fin, err := s.EffectSettleFinish(ctx, settle, finish)
		require.NoError(t, err)
		require.False(t, fin.RollingBack, "no session, no rollback")
		got, err = s.InvocationGet(ctx, inv.ID)
		require.NoError(t, err)
		require.Equal(t, maestrotype.InvocationSucceeded, got.State)
		require.Equal(t, "sent", got.Observation.Summary)
		require.Equal(t, got, fin.Invocation, "the settle returns the invocation as a read finds it")
		require.True(t, fin.MessageRead)
		require.NotNil(t, fin.Message, "the receipt's message status is read with it")
		ms, err := s.MessageStatusGet(ctx, "twilio", "SM1")
		require.NoError(t, err)
		require.Equal(t, ms, *fin.Message)
		eff, err := s.EffectGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.Equal(t, maestrotype.EffectSucceeded, eff.Status)
		require.Equal(t, newReceipt("SM1"), eff.Receipt)
	})

	t.Run("SettleFinishSaysTheSessionIsRollingBack", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		sess, err := s.SessionUpsert(ctx, ledger.Session{ID: "ses_" + randomHex(6), AgentID: "agent_1"})
		require.NoError(t, err)
		inv, _, err := s.InvocationInsert(ctx, newInvocation(sess.ID))
		require.NoError(t, err)
		p := claimParams("worker-a", time.Hour)
		p.OperationKey, p.InvocationID, p.SessionID = inv.OperationKey, inv.ID, sess.ID
		claim, err := s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.Equal(t, ledger.ClaimNew, claim.Outcome)
		_, err = s.SessionRollbackBegin(ctx, sess.ID)
		require.NoError(t, err)

		obs := maestrotype.Observation{Status: maestrotype.StatusSuccess, Summary: "sent"}
		back := maestrotype.Observation{Status: maestrotype.StatusSuccess, Summary: "sent; rolling back"}
		fin, err := s.EffectSettleFinish(ctx, ledger.EffectSettleParams{
			OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectSucceeded, Result: &obs,
		}, ledger.InvocationFinishParams{
			InvocationID: inv.ID, State: maestrotype.InvocationSucceeded, Observation: obs,
			SessionID: sess.ID, RollingBack: &back,
		})
		require.NoError(t, err)
		require.True(t, fin.RollingBack)
		require.False(t, fin.MessageRead)
		require.Nil(t, fin.Message)
		got, err := s.InvocationGet(ctx, inv.ID)
		require.NoError(t, err)
		require.Equal(t, "sent; rolling back", got.Observation.Summary)
		require.Equal(t, got, fin.Invocation)
		eff, err := s.EffectGet(ctx, p.OperationKey)
		require.NoError(t, err)
		require.Equal(t, "sent", eff.Result.Summary, "the effect keeps what the provider did")
	})
}
