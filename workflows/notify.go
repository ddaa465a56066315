package workflows

import (
	"errors"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// NotifyWorkflowName is the registered name of NotifyWorkflow.
const NotifyWorkflowName = "ApprovalNotify"

// Notification activities, registered by the activities package.
const (
	// ActivityNotifyPlan reads the request and the catalog and says who
	// is told at a stage, if the request is still pending.
	ActivityNotifyPlan = "NotifyPlan"
	// ActivityNotify tells one recipient, exactly once.
	ActivityNotify = "Notify"
	// ActivityNotifyFailed records a notification that could not be sent.
	ActivityNotifyFailed = "NotifyFailed"
)

// Notification stages, as tools.NotifyStage names them.
const (
	StageOpened    = "opened"
	StageEscalated = "escalated"
)

// NotifyWorkflowID derives the workflow ID from the approval request, so
// a request's approvers are told by one workflow however often it starts.
func NotifyWorkflowID(approvalID string) string {
	return "notify/" + approvalID
}

// NotifyInput starts the notification of one approval request.
type NotifyInput struct {
	ApprovalID string
}

// NotifyPlanInput asks who is told at Stage.
type NotifyPlanInput struct {
	ApprovalID string
	Stage      string
}

// NotifyPlan is who is told at a stage. Recipients are keys the catalog
// resolves to an address when the notification is sent (see
// tools.Recipient), so no address is kept in the workflow's history.
type NotifyPlan struct {
	// Pending is false once the request is decided: nobody is told.
	Pending    bool
	Recipients []string
	// EscalateAt is when a still-pending request escalates; zero when the
	// role does not escalate. Set by the opened stage's plan.
	EscalateAt time.Time
}

// NotifySendInput tells one recipient of one stage.
type NotifySendInput struct {
	ApprovalID string
	Stage      string
	Recipient  string
}

// NotifyFailedInput records that a recipient could not be told.
type NotifyFailedInput struct {
	NotifySendInput
	Cause string
}

// NotifyRetry bounds how hard one notification is tried: a channel that
// stays down is recorded as failed, and the request waits for its
// approvers as it would have anyway.
var NotifyRetry = &temporal.RetryPolicy{
	InitialInterval:    time.Second,
	BackoffCoefficient: 2,
	MaximumInterval:    10 * time.Second,
	MaximumAttempts:    4,
}

// NotifyWorkflow tells an approval request's approvers it is waiting, and,
// when their role escalates and the request is still undecided at the
// escalation time, tells the escalation list. Nothing it does decides the
// request: a notification that fails is recorded and the workflow goes on.
func NotifyWorkflow(ctx workflow.Context, in NotifyInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: ActivityTimeout,
		RetryPolicy:         NotifyRetry,
	})
	var plan NotifyPlan
	if err := workflow.ExecuteActivity(ctx, ActivityNotifyPlan, NotifyPlanInput{ApprovalID: in.ApprovalID, Stage: StageOpened}).Get(ctx, &plan); err != nil {
		return err
	}
	if !plan.Pending {
		return nil
	}
	notifyAll(ctx, in.ApprovalID, StageOpened, plan.Recipients)
	if plan.EscalateAt.IsZero() {
		return nil
	}
	if wait := plan.EscalateAt.Sub(workflow.Now(ctx)); wait > 0 {
		if err := workflow.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	var esc NotifyPlan
	if err := workflow.ExecuteActivity(ctx, ActivityNotifyPlan, NotifyPlanInput{ApprovalID: in.ApprovalID, Stage: StageEscalated}).Get(ctx, &esc); err != nil {
		return err
	}
	if esc.Pending {
		notifyAll(ctx, in.ApprovalID, StageEscalated, esc.Recipients)
	}
	return nil
}

// notifyAll tells every recipient at once and records each one that could
// not be told.
func notifyAll(ctx workflow.Context, approvalID, stage string, recipients []string) {
	futures := make([]workflow.Future, len(recipients))
	for i, r := range recipients {
		futures[i] = workflow.ExecuteActivity(ctx, ActivityNotify, NotifySendInput{ApprovalID: approvalID, Stage: stage, Recipient: r})
	}
	for i, f := range futures {
		err := f.Get(ctx, nil)
		if err == nil {
			continue
		}
		failed := NotifyFailedInput{
			NotifySendInput: NotifySendInput{ApprovalID: approvalID, Stage: stage, Recipient: recipients[i]},
			Cause:           rootCause(err),
		}
		if err := workflow.ExecuteActivity(ctx, ActivityNotifyFailed, failed).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Error("could not record a failed notification", "recipient", recipients[i], "err", err)
		}
	}
}

// startNotify starts the request's NotifyWorkflow as a child the
// invocation does not wait for: it outlives the invocation if need be, and
// a failure to start it only means nobody is told, never that the call
// fails.
func startNotify(ctx workflow.Context, approvalID string) {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            NotifyWorkflowID(approvalID),
		ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	})
	child := workflow.ExecuteChildWorkflow(cctx, NotifyWorkflowName, NotifyInput{ApprovalID: approvalID})
	err := child.GetChildWorkflowExecution().Get(ctx, nil)
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	if err != nil && !errors.As(err, &started) {
		workflow.GetLogger(ctx).Error("could not start notifying the approvers", "approval", approvalID, "err", err)
	}
}
