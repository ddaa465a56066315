package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/server"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

const refundArgs = `{"tenant_id":"t_100","amount_cents":2500,"reason":"Duplicate payment"}`

// clerkKey belongs to an operator who holds the ops role but not manager.
const clerkKey = "night-clerk-key"

func withClerk(o *options) {
	o.catalog = []byte(strings.Replace(string(tools.DemoCatalogYAML), "operators:\n",
		"operators:\n  - id: night-clerk\n    api_key_sha256: "+tools.HashKey(clerkKey)+"\n    roles: [ops]\n", 1))
}

func eventKinds(a apitype.Approval) []string {
	var out []string
	for _, e := range a.Events {
		out = append(out, e.Kind)
	}
	return out
}

func (e *env) requestRefund(name string) apiclient.Response {
	e.t.Helper()
	resp, err := e.invoke("issue_refund", e.key(name), refundArgs)
	require.NoError(e.t, err)
	require.True(e.t, resp.Pending)
	require.Contains(e.t, resp.Observation.Wording, "asked", "pending wording never claims the effect")
	return resp
}

func TestApprovedRefundRunsOnceWithReceipt(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")
	require.Zero(t, e.standins.Sandbox.CountRefunds(), "nothing before the decision")

	a, err := e.ops.Approve(e.ctx, pending.ApprovalID, "duplicate confirmed in ledger")
	require.NoError(t, err)
	require.Equal(t, "approved", a.Status)
	require.Equal(t, "operator:demo-manager", a.DecidedBy)

	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	id := done.Observation.Receipt.ID
	refund, err := e.standins.Reader().HTTPResource(e.ctx, e.standins.SandboxURL(), e.standins.Sandbox.Token(), "/v1/refunds/"+id)
	require.NoError(t, err)
	require.Equal(t, "succeeded", refund.Status)
	require.EqualValues(t, 2500, refund.Detail["amount_cents"])
	require.Equal(t, 1, e.standins.Sandbox.CountRefunds())

	a, err = e.ops.Approval(e.ctx, pending.ApprovalID)
	require.NoError(t, err)
	require.Equal(t, []string{"requested", "approved", "token_minted", "token_used"}, eventKinds(a))

	rep, err := e.ops.Audit(e.ctx)
	require.NoError(t, err)
	require.True(t, rep.Clean, "%+v", rep.Findings)
}

func TestOnlyTheApproverRoleMayDecide(t *testing.T) {
	t.Parallel()
	e := setup(t, withClerk)
	pending := e.requestRefund("refund")

	clerk := apiclient.New(e.url, clerkKey, apiclient.Options{})
	_, err := clerk.Approve(e.ctx, pending.ApprovalID, "looks fine")
	requireRefusal(t, err, http.StatusForbidden, mt.CodeNotApprover)
	_, err = e.agent.Approve(e.ctx, pending.ApprovalID, "")
	requireRefusal(t, err, http.StatusUnauthorized, mt.CodeUnauthorized)

	a, err := e.ops.Approval(e.ctx, pending.ApprovalID)
	require.NoError(t, err)
	require.Equal(t, "pending", a.Status)
	require.Equal(t, []string{"requested", "decision_refused"}, eventKinds(a), "the refused attempt is logged")
	require.Equal(t, "operator:night-clerk", a.Events[1].Actor)
	require.Zero(t, e.standins.Sandbox.CountRefunds())
}

func TestRejectedCallIsCancelledAndTheAgentToldSo(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")

	_, err := e.ops.Reject(e.ctx, pending.ApprovalID, "not a duplicate")
	require.NoError(t, err)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationRejected, done.State)
	require.Equal(t, mt.CodeApprovalRejected, done.Observation.Code)
	require.Contains(t, done.Observation.Wording, "not been done")
	require.Zero(t, e.standins.Sandbox.CountRefunds())

	_, err = e.ops.Approve(e.ctx, pending.ApprovalID, "changed my mind")
	requireRefusal(t, err, http.StatusConflict, mt.CodeApprovalClosed)
	_, err = e.ops.Approve(e.ctx, "apr_0000000000000000", "")
	requireRefusal(t, err, http.StatusNotFound, mt.CodeNotFound)
}

func TestModifiedArgumentsAreValidatedRehashedAndExecuted(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")
	before, err := e.ops.Approval(e.ctx, pending.ApprovalID)
	require.NoError(t, err)

	_, err = e.ops.Modify(e.ctx, pending.ApprovalID, json.RawMessage(`{"tenant_id":"t_100","amount_cents":-5,"reason":"x"}`), "")
	requireRefusal(t, err, http.StatusUnprocessableEntity, mt.CodeInvalidArgs)

	a, err := e.ops.Modify(e.ctx, pending.ApprovalID, json.RawMessage(`{"tenant_id":"t_100","amount_cents":2000,"reason":"Partial duplicate"}`), "only part was duplicated")
	require.NoError(t, err)
	require.Equal(t, "approved", a.Status)
	require.NotEqual(t, before.ArgsHash, a.ArgsHash)
	var modified apitype.ApprovalEvent
	for _, ev := range a.Events {
		if ev.Kind == "modified" {
			modified = ev
		}
	}
	require.Equal(t, before.ArgsHash, modified.ArgsHashBefore)
	require.Equal(t, a.ArgsHash, modified.ArgsHashAfter)

	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	refund, ok := e.standins.Sandbox.Refund(done.Observation.Receipt.ID)
	require.True(t, ok)
	require.EqualValues(t, 2000, refund.AmountCents, "the modified arguments ran")
}

func TestRacingDecidersOneWins(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")

	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_, errs[i] = e.ops.Approve(e.ctx, pending.ApprovalID, "")
			} else {
				_, errs[i] = e.ops.Reject(e.ctx, pending.ApprovalID, "")
			}
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			require.True(t, apiclient.IsRefusal(err, mt.CodeApprovalClosed), err)
		}
	}
	require.Equal(t, 1, wins)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.LessOrEqual(t, e.standins.Sandbox.CountRefunds(), 1)
	require.Contains(t, []mt.InvocationState{mt.InvocationSucceeded, mt.InvocationRejected}, done.State)
}

func TestTimeoutPolicies(t *testing.T) {
	t.Parallel()
	cat := strings.Replace(string(tools.DemoCatalogYAML), "      timeout: 1h\n", "      timeout: 1s\n", 1)                                    // delete_tenant_account: timed_out
	cat = strings.Replace(cat, "      timeout: 15m\n      on_timeout: timed_out\n", "      timeout: 1s\n      on_timeout: auto_approve\n", 1) // email_property_manager
	// Both requests wait side by side.
	cat = strings.Replace(cat, "while_awaiting_approval: strict", "while_awaiting_approval: allow_writes", 1)
	e := setup(t, func(o *options) { o.catalog = []byte(cat) })

	del, err := e.invoke("delete_tenant_account", e.key("delete"), `{"tenant_id":"t_101"}`)
	require.NoError(t, err)
	email, err := e.invoke("email_property_manager", e.key("email"), `{"tenant_id":"t_102","summary":"Noise complaint"}`)
	require.NoError(t, err)

	done, err := e.agent.Wait(e.ctx, del.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationTimedOut, done.State)
	require.Equal(t, mt.CodeApprovalTimedOut, done.Observation.Code)
	tenant, _ := e.standins.Sandbox.Tenant("t_101")
	require.False(t, tenant.Deleted, "a timed-out request never runs")

	done, err = e.agent.Wait(e.ctx, email.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	require.Equal(t, 1, e.standins.SES.CountEmails())
	a, err := e.ops.Approval(e.ctx, email.ApprovalID)
	require.NoError(t, err)
	require.Equal(t, "auto_approved", a.Status)
	require.Equal(t, ledger.TimeoutActor, a.DecidedBy, "the policy is the recorded actor")
}

func TestAuditScanCatchesAMoneyEffectWithoutApproval(t *testing.T) {
	t.Parallel()
	e := setup(t)

	// Tamper with the ledger: a refund effect that no approval covers.
	key := e.key("rogue-refund")
	_, err := e.store.EffectClaim(e.ctx, ledger.EffectClaimParams{
		OperationKey: key, InvocationID: "inv_rogue", Tool: "issue_refund", PayloadHash: "h", Owner: "rogue", LeaseTTL: time.Minute,
	})
	require.NoError(t, err)
	require.NoError(t, e.store.EffectSettle(e.ctx, ledger.EffectSettleParams{OperationKey: key, Owner: "rogue", Status: mt.EffectSucceeded}))

	rep, err := e.ops.Audit(e.ctx)
	require.NoError(t, err)
	require.False(t, rep.Clean)
	require.Len(t, rep.Findings, 1)
	require.Equal(t, ledger.AuditNoApproval, rep.Findings[0].Kind)
	require.Equal(t, key, rep.Findings[0].OperationKey)
}

func TestAuditScanIsScheduledDaily(t *testing.T) {
	t.Parallel()
	e := setup(t)

	desc := e.describeSchedule(server.AuditScheduleID(e.taskQueue))
	require.Equal(t, 24*time.Hour, desc.Schedule.Spec.Intervals[0].Every)

	// Run the scheduled workflow once by hand: it scans the same ledger.
	run, err := e.temporal.ExecuteWorkflow(e.ctx, client.StartWorkflowOptions{TaskQueue: e.taskQueue}, workflows.AuditWorkflowName)
	require.NoError(t, err)
	var res workflows.AuditResult
	require.NoError(t, run.Get(e.ctx, &res))
	require.Zero(t, res.Findings)
}
