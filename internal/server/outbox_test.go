package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/outbox"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// lossySignaller drops the signals named lost for as long as dropping
// says, as a Temporal frontend that is restarting would, and passes the
// rest to Temporal.
type lossySignaller struct {
	inner    outbox.Signaller
	lost     string
	dropping func(firstDrop time.Time) bool

	mu        sync.Mutex
	firstDrop time.Time
	dropped   int
	delivered int
}

func (l *lossySignaller) SignalWorkflow(ctx context.Context, workflowID, runID, name string, arg any) error {
	l.mu.Lock()
	if name == l.lost {
		if l.firstDrop.IsZero() || l.dropping(l.firstDrop) {
			if l.firstDrop.IsZero() {
				l.firstDrop = time.Now()
			}
			l.dropped++
			l.mu.Unlock()
			return errors.New("frontend unavailable: signal dropped")
		}
		l.delivered++
	}
	l.mu.Unlock()
	return l.inner.SignalWorkflow(ctx, workflowID, runID, name, arg)
}

func (l *lossySignaller) counts() (dropped, delivered int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped, l.delivered
}

// An approval whose wake-up is lost for longer than its token lives still
// runs: the outbox delivers the wake-up and renews the unspent token.
func TestApprovedCallRunsWhenItsSignalIsLostPastTheTokenLifetime(t *testing.T) {
	t.Parallel()
	// The renewed token must outlive the wake-up's trip through Temporal
	// to the executor on a loaded two-core machine running every package's
	// tests at once (10 s was once too short there); the loss must outlive
	// the token.
	const ttl = 30 * time.Second
	lossy := &lossySignaller{lost: workflows.SignalApprovalDecided,
		dropping: func(first time.Time) bool { return time.Since(first) < ttl+time.Second }}
	e := setup(t, func(o *options) {
		o.tokenTTL = ttl
		o.signaller = func(s outbox.Signaller) outbox.Signaller { lossy.inner = s; return lossy }
	})
	pending := e.requestRefund("refund")

	_, err := e.ops.Approve(e.ctx, pending.ApprovalID, "duplicate confirmed")
	require.NoError(t, err, "the decision stands although its signal was lost")
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	require.Equal(t, 1, e.standins.Sandbox.CountRefunds())

	dropped, delivered := lossy.counts()
	require.Greater(t, dropped, 1, "the wake-up was retried")
	require.Equal(t, 1, delivered)
	apr, err := e.ops.Approval(e.ctx, pending.ApprovalID)
	require.NoError(t, err)
	var renewed bool
	for _, ev := range apr.Events {
		renewed = renewed || ev.Kind == string(ledger.ApprovalEventTokenMinted) && ev.Actor == "outbox:late-delivery"
	}
	require.True(t, renewed, "the late delivery renewed the token: %+v", apr.Events)
	due, err := e.store.OutboxListDue(e.ctx, 0)
	require.NoError(t, err)
	require.Empty(t, due, "nothing is owed any more")

	rep, err := e.ops.Audit(e.ctx)
	require.NoError(t, err)
	require.True(t, rep.Clean, "%+v", rep.Findings)
}

// A first end whose call-ended signal is lost still reaches the session:
// the post-call workflow runs with the transcript.
func TestCallEndedSignalLostStillStartsThePostCallWorkflow(t *testing.T) {
	t.Parallel()
	lossy := &lossySignaller{lost: workflows.SignalCallEnded,
		dropping: func(time.Time) bool { return false }} // the first attempt only
	e := setup(t, func(o *options) {
		o.signaller = func(s outbox.Signaller) outbox.Signaller { lossy.inner = s; return lossy }
	})
	_, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)

	transcript := &mt.Transcript{Turns: []mt.Turn{
		{Speaker: "caller", Text: "Please call me back tomorrow.", At: time.Now()},
	}}
	end, err := e.agent.End(e.ctx, e.session, apitype.EndRequest{Transcript: transcript})
	require.NoError(t, err, "the end is recorded and its signal owed")
	require.True(t, end.Ended)
	e.waitPostCall()

	dropped, delivered := lossy.counts()
	require.Equal(t, 1, dropped)
	require.Equal(t, 1, delivered)
	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Len(t, sess.PostCall, 1, "the transcript's callback request reached the post-call workflow")
	require.Equal(t, "delivered", sess.PostCall[0].Status)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
}

// A decision committed by a process that died before it could signal is
// delivered by the relay's sweep: nothing but the ledger remembers it.
func TestRelayDeliversADecisionNobodySignalled(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")
	req, err := e.store.ApprovalRequestGet(e.ctx, pending.ApprovalID)
	require.NoError(t, err)

	wake, err := json.Marshal(workflows.ApprovalDecision{ApprovalID: req.ID})
	require.NoError(t, err)
	res, err := e.store.ApprovalDecide(e.ctx, ledger.ApprovalDecideParams{
		ApprovalID: req.ID, Decision: ledger.DecisionApprove, Actor: "operator:demo-manager", TokenTTL: time.Minute,
		Signal: &ledger.OutboxSignal{WorkflowID: workflows.ApprovalWorkflowID(req.OperationKey, req.SessionID),
			SignalName: workflows.SignalApprovalDecided, Payload: wake},
	})
	require.NoError(t, err)

	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	require.Eventually(t, func() bool {
		sig, err := e.store.OutboxGet(e.ctx, res.Signal.ID)
		return err == nil && sig.DeliveredAt != nil
	}, 10*time.Second, 20*time.Millisecond)
}
