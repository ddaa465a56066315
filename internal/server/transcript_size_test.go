package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/outbox"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// quietLine is said over and over by the agent to make a transcript
// large: the post-call rules read the caller's turns, so judging it costs
// little, and it is distinctive enough to search history for.
const quietLine = "quietline hold music "

// saying repeats quietLine to at least n bytes.
func saying(n int) string { return strings.Repeat(quietLine, n/len(quietLine)+1) }

// A platform may send an end-of-call report of up to 4 MiB, and Temporal
// refuses a payload over 2 MiB. A 3.5 MiB report ends the call; its
// transcript stays in the ledger, where the post-call judge reads it; and
// the caller's message taken during the call is delivered once. A report
// over the cap is refused 413 at the door and ends nothing, so the
// platform's retry still ends the call.
func TestPlatformLargeEndOfCallReportReachesPostCallWork(t *testing.T) {
	t.Parallel()
	large, tooLarge := saying(3<<20+512<<10), saying(4<<20)
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withPlatforms(roomyBudget))
			got := d.call(t, e, time.Now(), "call_1", "take_message", `{"message":"Please renew my parking permit."}`)
			require.False(t, got.err, got.text)

			status, body := send(t, d.end(e, platformEnv[d.env], time.Now(), e.session, tooLarge))
			require.Equal(t, http.StatusRequestEntityTooLarge, status)
			var refused struct {
				Observation mt.Observation `json:"observation"`
			}
			require.NoError(t, json.Unmarshal(body, &refused))
			require.Equal(t, mt.CodePayloadTooLarge, refused.Observation.Code)
			sess, err := e.ops.Session(e.ctx, e.session)
			require.NoError(t, err)
			require.Equal(t, mt.SessionActive, sess.State, "a refused report ends nothing")

			req := d.end(e, platformEnv[d.env], time.Now().Add(time.Second), e.session, large)
			require.Greater(t, req.ContentLength, int64(3<<20+512<<10))
			status, body = send(t, req)
			require.Equal(t, http.StatusOK, status, "%.512s", body)
			var res apitype.PlatformEventResult
			require.NoError(t, json.Unmarshal(body, &res))
			require.True(t, res.Ended)
			e.waitPostCall()

			sess, err = e.ops.Session(e.ctx, e.session)
			require.NoError(t, err)
			require.Equal(t, mt.SessionEnded, sess.State)
			require.Len(t, sess.PostCall, 2, "the message, and the callback the caller asked for in the transcript: %+v", sess.PostCall)
			for _, it := range sess.PostCall {
				require.Equal(t, "delivered", it.Status, "%+v", it)
			}
			require.Equal(t, 1, e.standins.SES.CountEmails(), "the caller's message went out once")
			require.Equal(t, 1, e.standins.Twilio.CountMessages(), "the transcript was judged: the callback request paged the office once")
			stored, err := e.store.SessionGet(e.ctx, e.session)
			require.NoError(t, err)
			require.Contains(t, string(stored.Transcript), quietLine, "the ledger keeps the whole transcript")
			e.requireNotInHistory(quietLine)
		})
	}
}

// An agent may end a call with a transcript inline as large as a
// platform's: it is kept in the ledger and judged from there.
func TestLargeInlineTranscriptReachesPostCallWork(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	transcript := &mt.Transcript{Turns: []mt.Turn{
		{Speaker: "agent", Text: saying(3 << 20), At: time.Now()},
		{Speaker: "caller", Text: "Please call me back tomorrow.", At: time.Now()},
	}}
	end, err := e.agent.End(e.ctx, e.session, apitype.EndRequest{Transcript: transcript})
	require.NoError(t, err)
	require.True(t, end.Ended)
	e.waitPostCall()

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Len(t, sess.PostCall, 1, "the transcript's callback request reached the post-call workflow: %+v", sess.PostCall)
	require.Equal(t, "delivered", sess.PostCall[0].Status)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
	e.requireNotInHistory(quietLine)
}

// refusingSignaller answers the signals named refused as Temporal answers
// one it cannot take, and passes the rest to Temporal.
type refusingSignaller struct {
	inner   outbox.Signaller
	refused string
}

func (r *refusingSignaller) SignalWorkflow(ctx context.Context, workflowID, runID, name string, arg any) error {
	if name == r.refused {
		return serviceerror.NewInvalidArgument("Blob data size exceeds limit.")
	}
	return r.inner.SignalWorkflow(ctx, workflowID, runID, name, arg)
}

// A call-ended signal Temporal refuses as invalid is not retried for ever
// with nobody told: it is held for a human, who finds it with Temporal's
// answer in the reconciliation queue, in the console and in the open
// reconciliations metric.
func TestCallEndedSignalTemporalRefusesIsHeldForAHuman(t *testing.T) {
	t.Parallel()
	refusing := &refusingSignaller{refused: workflows.SignalCallEnded}
	e := setup(t, func(o *options) {
		o.signaller = func(s outbox.Signaller) outbox.Signaller { refusing.inner = s; return refusing }
	})
	_, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	end, err := e.agent.End(e.ctx, e.session, apitype.EndRequest{})
	require.NoError(t, err)
	require.True(t, end.Ended)

	list, err := e.ops.Reconciliations(e.ctx)
	require.NoError(t, err)
	require.Len(t, list.Reconciliations, 1, "%+v", list.Reconciliations)
	held := list.Reconciliations[0]
	require.Equal(t, "held", held.Status)
	require.Contains(t, held.Reason, "Blob data size exceeds limit", "it says why")
	require.NotNil(t, held.HeldSignal)
	require.Equal(t, apitype.HeldSignal{WorkflowID: workflows.SessionWorkflowID(e.session), SignalName: workflows.SignalCallEnded,
		SessionID: e.session, PayloadBytes: held.HeldSignal.PayloadBytes}, *held.HeldSignal)

	mine, err := e.ops.ReconciliationPage(e.ctx, apitype.ListQuery{Agent: "voice-agent", Status: "held_signal"})
	require.NoError(t, err)
	require.Len(t, mine.Reconciliations, 1, "the held signal is listed under its session's agent")

	one, err := e.ops.Reconciliation(e.ctx, held.OperationKey)
	require.NoError(t, err)
	require.Equal(t, held.Reason, one.Reason)
	_, err = e.ops.RetryReconciliation(e.ctx, held.OperationKey)
	requireRefusal(t, err, http.StatusConflict, mt.CodeNotHeld)

	families, _ := e.scrape()
	require.Equal(t, map[string]float64{"effect": 0, "post_call": 0, "signal": 1}, byLabels(families["maestro_reconciliations_open"], "kind"))

	status, page := e.signIn(tools.DemoOpsKey).get("/console/reconciliations")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "Temporal refused the call-ended signal: the post-call work of session "+e.session+" never started")

	due, err := e.store.OutboxListDue(e.ctx, 0)
	require.NoError(t, err)
	require.Empty(t, due, "nothing retries it")
	sig, err := e.store.OutboxGet(e.ctx, mustHeldSignalID(t, held.OperationKey))
	require.NoError(t, err)
	require.Equal(t, 1, sig.Attempts)
}

func mustHeldSignalID(t *testing.T, key string) int64 {
	t.Helper()
	id, ok := ledger.ParseOutboxHeldKey(key)
	require.True(t, ok, key)
	return id
}
