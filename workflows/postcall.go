package workflows

import (
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

	var g Gathered
	if err := workflow.ExecuteActivity(actx, ActivityPostCallGather, in).Get(ctx, &g); err != nil {
		return PostCallResult{}, err
	}
	var j Judged
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
