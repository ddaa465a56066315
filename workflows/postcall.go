package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// DispatchTimeout bounds one post-call delivery, approval wait included.
const DispatchTimeout = 2 * time.Hour

// PostCallWorkflow performs the call's deferred work after the call:
// gather → judge → dispatch → persist. Each item goes through the normal
// gate as a real-sync call with a receipt, under an operation key derived
// from the session and the item, so nothing is delivered twice.
func PostCallWorkflow(ctx workflow.Context, in PostCallInput) (PostCallResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: ActivityTimeout, RetryPolicy: ActivityRetry})

	var g mt.Gathered
	if err := workflow.ExecuteActivity(actx, ActivityPostCallGather, in).Get(ctx, &g); err != nil {
		return PostCallResult{}, err
	}
	var j mt.Judged
	if err := workflow.ExecuteActivity(actx, ActivityPostCallJudge, g).Get(ctx, &j); err != nil {
		return PostCallResult{}, err
	}
	res := PostCallResult{Deliveries: []Delivery{}, Failures: j.Failures}
	for _, f := range j.Failures {
		if err := workflow.ExecuteActivity(actx, ActivityPostCallPersist, Delivery{
			SessionID: in.SessionID, Item: mt.WorkItem{Key: f.Key, Tool: f.Tool, Source: f.Source, DeferredID: f.DeferredID}, State: mt.InvocationFailed, Summary: f.Reason,
		}).Get(ctx, nil); err != nil {
			return res, err
		}
	}
	dctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: DispatchTimeout,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         ActivityRetry,
	})
	if workflow.GetVersion(ctx, durableDeliveryVersion, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
		dl := &deliverer{in: in, backoff: backoffOrDefault(g.Backoff), actx: actx, dctx: dctx}
		// Each item waits out its own outages: one item's day of retries
		// must not hold back the next item's delivery.
		out := make([]Delivery, len(j.Items))
		errs := make([]error, len(j.Items))
		wg := workflow.NewWaitGroup(ctx)
		for i, item := range j.Items {
			wg.Add(1)
			workflow.Go(ctx, func(ctx workflow.Context) {
				defer wg.Done()
				out[i], errs[i] = dl.deliver(ctx, item)
			})
		}
		wg.Wait(ctx)
		res.Deliveries = append(res.Deliveries, out...)
		return res, errors.Join(errs...)
	}
	for _, item := range j.Items {
		var d Delivery
		if err := workflow.ExecuteActivity(dctx, ActivityPostCallDispatch, in.SessionID, in.AgentID, item).Get(ctx, &d); err != nil {
			d = Delivery{SessionID: in.SessionID, Item: item, OperationKey: PostCallOperationKey(in.SessionID, item.Key), State: mt.InvocationFailed, Summary: err.Error()}
		}
		if err := workflow.ExecuteActivity(actx, ActivityPostCallPersist, d).Get(ctx, nil); err != nil {
			return res, err
		}
		res.Deliveries = append(res.Deliveries, d)
	}
	return res, nil
}

// PostCallRetryWorkflowName is the registered name of PostCallRetryWorkflow.
const PostCallRetryWorkflowName = "PostCallRetry"

// PostCallRetryWorkflowID names an operator's retry of a held item by the
// first attempt it makes, so asking twice starts one retry.
func PostCallRetryWorkflowID(sessionID, itemKey string, first int) string {
	return fmt.Sprintf("postcall-retry/%s/%s/%d", sessionID, itemKey, first)
}

// PostCallRetryInput asks to deliver a held item again, along all its
// channels, with attempts numbered after the ones already made.
type PostCallRetryInput struct {
	SessionID string      `json:"session_id"`
	AgentID   string      `json:"agent_id"`
	Item      mt.WorkItem `json:"item"`
	First     int         `json:"first"`
	Backoff   *mt.Backoff `json:"backoff,omitempty"`
	// Earlier are the attempts already made, kept in the item's record.
	Earlier []Attempt `json:"earlier,omitempty"`
}

// PostCallRetryWorkflow delivers one held item again, as an operator
// asked: the same chain, deadlines and exactly-once keys as the first
// time.
func PostCallRetryWorkflow(ctx workflow.Context, in PostCallRetryInput) (Delivery, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: ActivityTimeout, RetryPolicy: ActivityRetry})
	dctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: DispatchTimeout,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         ActivityRetry,
	})
	dl := &deliverer{in: PostCallInput{SessionID: in.SessionID, AgentID: in.AgentID}, backoff: backoffOrDefault(in.Backoff),
		actx: actx, dctx: dctx, first: in.First, earlier: in.Earlier}
	return dl.deliver(ctx, in.Item)
}
