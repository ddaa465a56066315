package ledgertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

func testCanary(t *testing.T, setup setupFunc) {
	s, ctx := setup(t)
	last, err := s.CanaryLastResults(ctx)
	require.NoError(t, err)
	require.Empty(t, last, "no run yet")

	receipt := &mt.Receipt{Provider: "twilio", ID: "SM1", Status: "queued", Fields: map[string]string{"message_sid": "SM1"}}
	require.NoError(t, s.CanaryRecord(ctx, []ledger.CanaryResult{
		{RunID: "run-1", Tool: "send_sms", OK: true, Detail: "fetched", Receipt: receipt},
		{RunID: "run-1", Tool: "send_email", OK: false, Detail: "refused"},
	}))
	require.NoError(t, s.CanaryRecord(ctx, []ledger.CanaryResult{
		{RunID: "run-2", Tool: "send_sms", OK: false, Detail: "Twilio answered 500"},
	}))

	last, err = s.CanaryLastResults(ctx)
	require.NoError(t, err)
	require.Len(t, last, 2)
	email, sms := last[0], last[1]
	require.Equal(t, "send_email", email.Tool)
	require.False(t, email.OK)
	require.Nil(t, email.LastSuccessAt, "never passed")
	require.Nil(t, email.Receipt)
	require.Equal(t, "send_sms", sms.Tool)
	require.Equal(t, "run-2", sms.RunID, "the last run is the tool's state")
	require.False(t, sms.OK)
	require.Equal(t, "Twilio answered 500", sms.Detail)
	requireRecent(t, sms.CheckedAt)
	require.NotNil(t, sms.LastSuccessAt, "run-1 passed")
	require.False(t, sms.LastSuccessAt.After(sms.CheckedAt))

	run, err := s.CanaryRunResults(ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, run, 2)
	require.Equal(t, receipt.ID, run[1].Receipt.ID)
	require.True(t, run[1].OK)

	require.Error(t, s.CanaryRecord(ctx, []ledger.CanaryResult{{Tool: "send_sms"}}), "a result needs its run")
	none, err := s.CanaryRunResults(ctx, "run-unknown")
	require.NoError(t, err)
	require.Empty(t, none)
}
