package activities_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

func (f *fixture) finalize(in workflows.ExecuteInput, cause string) (workflows.InvocationResult, error) {
	val, err := f.env.ExecuteActivity(workflows.ActivityFinalize, workflows.FinalizeInput{Execute: in, Cause: cause})
	if err != nil {
		return workflows.InvocationResult{}, err
	}
	var res workflows.InvocationResult
	require.NoError(f.t, val.Get(&res))
	return res, nil
}

// claim claims in's key as an attempt that then stopped, with the given
// lease.
func (f *fixture) claim(in workflows.ExecuteInput, lease time.Duration) {
	f.t.Helper()
	_, err := f.store.EffectClaim(f.ctx, ledger.EffectClaimParams{
		OperationKey: in.OperationKey, InvocationID: in.InvocationID, Tool: in.Tool, PayloadHash: in.ArgsHash,
		Owner: "run/1/1", LeaseTTL: lease, BeforeState: []byte(`{"kind":"twilio_sms"}`),
	})
	require.NoError(f.t, err)
}

func TestFinalizeFailsAnInvocationThatClaimedNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.invocation("create_work_order", mt.RouteCompensable,
		`{"tenant_id":"t_100","category":"plumbing","description":"Leaking tap","priority":"routine"}`)

	res, err := f.finalize(in, `tool "create_work_order" is no longer in the catalog`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationFailed, res.State)
	require.Equal(t, mt.CodeAborted, res.Observation.Code)
	require.Contains(t, res.Observation.NextActions.RootCause, "is no longer in the catalog")
	require.NotEmpty(t, res.Observation.NextActions.Remediation)
	require.NotEmpty(t, res.Observation.NextActions.StopCondition)

	inv, err := f.store.InvocationGet(f.ctx, in.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationFailed, inv.State)
	require.Equal(t, mt.CodeAborted, inv.Observation.Code)

	// Finalizing again changes nothing.
	res, err = f.finalize(in, "another cause")
	require.NoError(t, err)
	require.Contains(t, res.Observation.NextActions.RootCause, "is no longer in the catalog")
}

func TestFinalizeHoldsAnEffectLeftInProgress(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.invocation("send_sms", mt.RouteGated, `{"to":"+14155550100","body":"Your plumber comes at 3pm"}`)
	f.claim(in, time.Nanosecond)

	res, err := f.finalize(in, "error settling effect: connection refused")
	require.NoError(t, err)
	require.Equal(t, mt.InvocationNeedsReconciliation, res.State)
	require.Equal(t, mt.CodeOutcomeUnknown, res.Observation.Code)
	require.Contains(t, res.Observation.NextActions.RootCause, "connection refused")

	eff, err := f.store.EffectGet(f.ctx, in.OperationKey)
	require.NoError(t, err)
	require.Equal(t, mt.EffectNeedsReconciliation, eff.Status)
	events, err := f.store.ReconciliationEventList(f.ctx, in.OperationKey)
	require.NoError(t, err)
	require.Len(t, events, 1)
	require.Equal(t, ledger.ReconciliationEscalated, events[0].Kind)
	require.Contains(t, events[0].Reason, "may have called the provider")
	inv, err := f.store.InvocationGet(f.ctx, in.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationNeedsReconciliation, inv.State)
}

func TestFinalizeWaitsOutALiveLease(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.invocation("send_sms", mt.RouteGated, `{"to":"+14155550100","body":"Your plumber comes at 3pm"}`)
	f.claim(in, time.Hour)

	_, err := f.finalize(in, "activity StartToClose timeout")
	require.ErrorContains(t, err, "another attempt holds the lease")

	eff, err := f.store.EffectGet(f.ctx, in.OperationKey)
	require.NoError(t, err)
	require.Equal(t, mt.EffectInProgress, eff.Status, "its holder may still come back with the answer")
	inv, err := f.store.InvocationGet(f.ctx, in.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationRunning, inv.State)
}

func TestFinalizeFinishesFromASettledEffect(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := f.invocation("send_sms", mt.RouteGated, `{"to":"+14155550100","body":"Your plumber comes at 3pm"}`)
	f.claim(in, time.Hour)
	settled := mt.Observation{Status: mt.StatusSuccess, Summary: "send_sms confirmed by twilio", Wording: "I've sent the text."}
	require.NoError(t, f.store.EffectSettle(f.ctx, ledger.EffectSettleParams{
		OperationKey: in.OperationKey, Owner: "run/1/1", Status: mt.EffectSucceeded,
		Receipt: &mt.Receipt{Provider: "twilio", ID: "SM1", Status: "queued"}, Result: &settled,
	}))

	res, err := f.finalize(in, "error finishing invocation: connection refused")
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, res.State)
	require.Equal(t, settled.Summary, res.Observation.Summary)
}
