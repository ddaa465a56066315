package ledgertest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

func testMessageStatus(t *testing.T, setup setupFunc) {
	report := func(sid string, status mt.MessageStatus) ledger.MessageStatusReport {
		return ledger.MessageStatusReport{Provider: "twilio", MessageID: sid, Status: status, Recipient: "+14155550100"}
	}
	record := func(t *testing.T, ctx context.Context, s ledger.Store, r ledger.MessageStatusReport) (mt.MessageStatus, ledger.MessageStatusOutcome) {
		t.Helper()
		got, outcome, err := s.MessageStatusRecord(ctx, r)
		require.NoError(t, err)
		return got.Status, outcome
	}

	t.Run("InvocationIsReadWithItsMessage", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_with_message"))
		require.NoError(t, err)
		got, ms, err := s.InvocationGetWithMessage(ctx, inv.ID, "twilio")
		require.NoError(t, err)
		require.Equal(t, inv.ID, got.ID)
		require.Nil(t, ms, "no receipt names a message")

		require.NoError(t, s.InvocationFinish(ctx, inv.ID, mt.InvocationSucceeded, mt.Observation{Status: mt.StatusSuccess, Summary: "sent",
			Receipt: &mt.Receipt{Provider: "twilio", ID: "SM_joined", Fields: map[string]string{mt.ReceiptMessageSID: "SM_joined"}}}))
		_, ms, err = s.InvocationGetWithMessage(ctx, inv.ID, "twilio")
		require.NoError(t, err)
		require.Nil(t, ms, "no status reported yet")

		record(t, ctx, s, report("SM_joined", mt.MessageDelivered))
		got, ms, err = s.InvocationGetWithMessage(ctx, inv.ID, "twilio")
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, got.State)
		require.NotNil(t, ms)
		want, err := s.MessageStatusGet(ctx, "twilio", "SM_joined")
		require.NoError(t, err)
		require.Equal(t, want, *ms)
		_, ms, err = s.InvocationGetWithMessage(ctx, inv.ID, "other")
		require.NoError(t, err)
		require.Nil(t, ms, "another provider's message")

		_, _, err = s.InvocationGetWithMessage(ctx, "inv_missing", "twilio")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})

	t.Run("ArrivesBeforeTheLedgerKnowsTheMessage", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		r := report("SM_early", mt.MessageDelivered)
		got, outcome, err := s.MessageStatusRecord(ctx, r)
		require.NoError(t, err)
		require.Equal(t, ledger.MessageStatusRecorded, outcome)
		require.Equal(t, mt.MessageDelivered, got.Status)
		require.Equal(t, "+14155550100", got.Recipient)
		requireRecent(t, got.UpdatedAt)

		// The send settles afterwards and is joined to the status by SID.
		inv, _, err := s.InvocationInsert(ctx, newInvocation("ses_early"))
		require.NoError(t, err)
		p := claimParams("worker-a", time.Hour)
		p.OperationKey, p.InvocationID = inv.OperationKey, inv.ID
		_, err = s.EffectClaim(ctx, p)
		require.NoError(t, err)
		require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
			OperationKey: p.OperationKey, Owner: "worker-a", Status: mt.EffectSucceeded, Receipt: newReceipt("SM_early"),
		}))
		joined, err := s.MessageStatusListBySession(ctx, "ses_early")
		require.NoError(t, err)
		require.Len(t, joined, 1)
		require.Equal(t, p.OperationKey, joined[0].Effect.OperationKey)
		require.Equal(t, mt.MessageDelivered, joined[0].Message.Status)
		require.Equal(t, "queued", joined[0].Effect.Receipt.Status, "the receipt stays the provider's answer to the send")
	})

	t.Run("MovesOnlyForward", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		steps := []struct {
			status mt.MessageStatus
			want   mt.MessageStatus
			out    ledger.MessageStatusOutcome
		}{
			{mt.MessageQueued, mt.MessageQueued, ledger.MessageStatusRecorded},
			{mt.MessageSent, mt.MessageSent, ledger.MessageStatusAdvanced},
			{mt.MessageSending, mt.MessageSent, ledger.MessageStatusStale},
			{mt.MessageDelivered, mt.MessageDelivered, ledger.MessageStatusAdvanced},
			{mt.MessageUndelivered, mt.MessageDelivered, ledger.MessageStatusStale},
			{mt.MessageRead, mt.MessageRead, ledger.MessageStatusAdvanced},
		}
		for _, st := range steps {
			got, outcome := record(t, ctx, s, report("SM_forward", st.status))
			require.Equal(t, st.want, got, "after %s", st.status)
			require.Equal(t, st.out, outcome, "after %s", st.status)
		}
	})

	t.Run("OutOfOrderKeepsTheLaterStatus", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		got, outcome := record(t, ctx, s, report("SM_ooo", mt.MessageDelivered))
		require.Equal(t, ledger.MessageStatusRecorded, outcome)
		got, outcome = record(t, ctx, s, report("SM_ooo", mt.MessageSent))
		require.Equal(t, ledger.MessageStatusStale, outcome)
		require.Equal(t, mt.MessageDelivered, got)
	})

	t.Run("AFailureIsFinal", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		r := report("SM_failed", mt.MessageUndelivered)
		r.ErrorCode = "30003"
		got, _, err := s.MessageStatusRecord(ctx, r)
		require.NoError(t, err)
		require.Equal(t, "30003", got.ErrorCode)
		for _, later := range []mt.MessageStatus{mt.MessageDelivered, mt.MessageRead, mt.MessageFailed, mt.MessageSent} {
			status, outcome := record(t, ctx, s, report("SM_failed", later))
			require.Equal(t, mt.MessageUndelivered, status, "after %s", later)
			require.Equal(t, ledger.MessageStatusStale, outcome)
		}
		stored, err := s.MessageStatusGet(ctx, "twilio", "SM_failed")
		require.NoError(t, err)
		require.Equal(t, "30003", stored.ErrorCode)
	})

	t.Run("RefusesReplays", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		_, outcome := record(t, ctx, s, report("SM_replay", mt.MessageSent))
		require.Equal(t, ledger.MessageStatusRecorded, outcome)
		_, outcome = record(t, ctx, s, report("SM_replay", mt.MessageSent))
		require.Equal(t, ledger.MessageStatusReplayed, outcome, "the same status again")

		withToken := report("SM_replay", mt.MessageDelivered)
		withToken.IdempotencyToken = "tok-1"
		_, outcome = record(t, ctx, s, withToken)
		require.Equal(t, ledger.MessageStatusAdvanced, outcome)

		// A token seen before is a replay whatever the callback now says.
		forged := report("SM_replay", mt.MessageRead)
		forged.IdempotencyToken = "tok-1"
		got, outcome := record(t, ctx, s, forged)
		require.Equal(t, ledger.MessageStatusReplayed, outcome)
		require.Equal(t, mt.MessageDelivered, got)

		// A replay of a status that was stale when first seen stays a replay.
		_, outcome = record(t, ctx, s, report("SM_replay", mt.MessageSent))
		require.Equal(t, ledger.MessageStatusReplayed, outcome)
	})

	t.Run("ConcurrentCallbacksSettleOnTheLatestStatus", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		statuses := []mt.MessageStatus{mt.MessageQueued, mt.MessageSending, mt.MessageSent, mt.MessageDelivered}
		const copies = 3
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			outcomes = map[ledger.MessageStatusOutcome]int{}
			errs     []error
		)
		for range copies {
			for _, st := range statuses {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, outcome, err := s.MessageStatusRecord(ctx, report("SM_race", st))
					mu.Lock()
					defer mu.Unlock()
					outcomes[outcome]++
					errs = append(errs, err)
				}()
			}
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, len(statuses)*(copies-1), outcomes[ledger.MessageStatusReplayed], "each status is taken once: %v", outcomes)
		require.Equal(t, 1, outcomes[ledger.MessageStatusRecorded], "%v", outcomes)
		got, err := s.MessageStatusGet(ctx, "twilio", "SM_race")
		require.NoError(t, err)
		require.Equal(t, mt.MessageDelivered, got.Status)
	})

	t.Run("RefusesBadReports", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		for name, r := range map[string]ledger.MessageStatusReport{
			"no provider":    {MessageID: "SM_x", Status: mt.MessageSent},
			"no message ID":  {Provider: "twilio", Status: mt.MessageSent},
			"unknown status": {Provider: "twilio", MessageID: "SM_x", Status: "teleported"},
		} {
			_, _, err := s.MessageStatusRecord(ctx, r)
			require.Error(t, err, name)
		}
		_, err := s.MessageStatusGet(ctx, "twilio", "SM_x")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})

	t.Run("ListsSucceededEffectsWhoseMessageFailed", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		settle := func(sid string) string {
			p := claimParams("worker-a", time.Hour)
			_, err := s.EffectClaim(ctx, p)
			require.NoError(t, err)
			require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
				OperationKey: p.OperationKey, Owner: "worker-a", Status: mt.EffectSucceeded, Receipt: newReceipt(sid),
			}))
			return p.OperationKey
		}
		undelivered := settle("SM_lost")
		settle("SM_fine")
		failed := settle("SM_failed")
		record(t, ctx, s, report("SM_lost", mt.MessageUndelivered))
		record(t, ctx, s, report("SM_fine", mt.MessageDelivered))
		record(t, ctx, s, report("SM_failed", mt.MessageFailed))
		record(t, ctx, s, report("SM_unclaimed", mt.MessageFailed))

		got, err := s.MessageStatusListFailed(ctx, 0)
		require.NoError(t, err)
		var keys []string
		for _, em := range got {
			keys = append(keys, em.Effect.OperationKey)
		}
		require.Equal(t, []string{undelivered, failed}, keys, "oldest report first; a message no receipt names is not listed")
		require.Equal(t, mt.MessageUndelivered, got[0].Message.Status)
	})
}
