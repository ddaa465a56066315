package grader

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"

	"github.com/maestro-run/maestro/workflows"
)

// retryInfo restores the retry policy Temporal's test environment leaves
// out of an activity's info. A real server sends it with every activity
// task, and the Execute activity reads it to recognise its last attempt,
// where it settles a retryable failure with an observation instead of
// asking for another try. Without it, every retried path would end in a
// workflow error the agent never sees in production.
type retryInfo struct {
	interceptor.WorkerInterceptorBase
}

func (*retryInfo) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &retryInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

type retryInbound struct {
	interceptor.ActivityInboundInterceptorBase
}

func (i *retryInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	return i.Next.Init(&retryOutbound{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: outbound}})
}

type retryOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
}

// GetInfo reports the policy the invocation workflow schedules Execute
// with, as the server would.
func (o *retryOutbound) GetInfo(ctx context.Context) activity.Info {
	info := o.Next.GetInfo(ctx)
	if info.RetryPolicy == nil {
		info.RetryPolicy = workflows.ActivityRetry
	}
	return info
}
