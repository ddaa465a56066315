package server_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// interceptedClient is a Temporal client of the test's own, made with the
// given interceptors.
func interceptedClient(t *testing.T, interceptors []interceptor.ClientInterceptor) client.Client {
	t.Helper()
	return dialTemporal(t, testCodec.Apply(client.Options{Interceptors: interceptors}))
}

// heldStarts holds every start of one workflow type until released, as a
// Temporal frontend slow to answer does: whatever admission committed
// before the start is visible meanwhile.
type heldStarts struct {
	interceptor.ClientInterceptorBase
	workflowType string
	// arrived is closed once a held start has been asked for.
	arrived     chan struct{}
	arriveOnce  sync.Once
	released    chan struct{}
	releaseOnce sync.Once
}

func holdStarts(t *testing.T, workflowType string) *heldStarts {
	h := &heldStarts{workflowType: workflowType, arrived: make(chan struct{}), released: make(chan struct{})}
	t.Cleanup(h.release)
	return h
}

func (h *heldStarts) release() { h.releaseOnce.Do(func() { close(h.released) }) }

func (h *heldStarts) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &heldStartsOutbound{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}, h: h}
}

type heldStartsOutbound struct {
	interceptor.ClientOutboundInterceptorBase
	h *heldStarts
}

func (o *heldStartsOutbound) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	if in.WorkflowType == o.h.workflowType {
		o.h.arriveOnce.Do(func() { close(o.h.arrived) })
		select {
		case <-o.h.released:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return o.Next.ExecuteWorkflow(ctx, in)
}

// A manager may approve a request the moment it is listed, which is before
// admission has started the call's workflow: the wake-up then finds no
// workflow to signal. It must stay owed until the workflow is there, not
// be dropped, or the approved text waits out the approval's timeout.
func TestAnApprovalDecidedBeforeItsWorkflowStartsStillRunsTheCall(t *testing.T) {
	t.Parallel()
	held := holdStarts(t, workflows.InvocationWorkflowName)
	e := setup(t, func(o *options) { o.interceptors = []interceptor.ClientInterceptor{held} })
	type invoked struct {
		resp apiclient.Response
		err  error
	}
	done := make(chan invoked, 1)
	go func() {
		resp, err := e.invoke("send_sms", e.key("other-phone"), `{"to":"+14155550177","body":"Your code is 1234."}`)
		done <- invoked{resp, err}
	}()
	select {
	case <-held.arrived:
	case got := <-done:
		require.FailNow(t, "admission answered without starting the call's workflow", "%+v %v", got.resp, got.err)
	}

	list, err := e.ops.Approvals(e.ctx, "pending")
	require.NoError(t, err)
	var pending apitype.Approval
	for _, a := range list.Approvals {
		if a.SessionID == e.session && a.Tool == "send_sms" {
			pending = a
		}
	}
	require.NotEmpty(t, pending.ID, "the request is listed while its workflow's start is held: %+v", list.Approvals)
	_, err = e.ops.Approve(e.ctx, pending.ID, "the caller's other phone")
	require.NoError(t, err)
	held.release()

	got := <-done
	require.NoError(t, got.err)
	require.Equal(t, pending.ID, got.resp.ApprovalID)
	// The approval's own timeout is ten minutes: a lost wake-up is told
	// apart from a slow machine with room to spare.
	ctx, cancel := context.WithTimeout(e.ctx, 90*time.Second)
	defer cancel()
	final, err := e.agent.Wait(ctx, got.resp.InvocationID)
	require.NoError(t, err, "the approved call never ran: its wake-up was lost")
	require.Equal(t, mt.InvocationSucceeded, final.State, "%+v", final.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
}
