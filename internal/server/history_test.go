package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// TestRecordedHistoriesReplay runs one invocation per route on a real
// server, exports each workflow history as JSON and replays it against the
// current workflow code. With MAESTRO_RECORD_HISTORIES=NAME it also
// checks them in under workflows/testdata/encrypted/NAME, which the
// workflows package replays on every test run beside the histories of
// earlier workflow versions (NAME=1 rewrites the first encrypted set).
func TestRecordedHistoriesReplay(t *testing.T) {
	t.Parallel()
	e := setup(t)
	calls := map[string]struct{ tool, args string }{
		"read":        {"lookup_tenant", `{"tenant_id":"t_100"}`},
		"compensable": {"create_work_order", `{"tenant_id":"t_100","category":"hvac","description":"No heat","priority":"urgent"}`},
		"deferred":    {"take_message", `{"message":"Call me back"}`},
		"preapproved": {"escalate_to_human", pageArgs},
	}
	dir := t.TempDir()
	switch name := os.Getenv("MAESTRO_RECORD_HISTORIES"); name {
	case "":
	case "1":
		dir = filepath.Join("..", "..", "workflows", "testdata", "encrypted")
	default:
		dir = filepath.Join("..", "..", "workflows", "testdata", "encrypted", filepath.Base(name))
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	for name, c := range calls {
		resp, err := e.invoke(c.tool, e.key(name), c.args)
		require.NoError(t, err)
		require.False(t, resp.Pending, name)
		e.recordAndReplay(dir, name)
	}

	// A gated call that waits for a human and runs after approval.
	pending, err := e.invoke("issue_refund", e.key("approved"), refundArgs)
	require.NoError(t, err)
	_, err = e.ops.Approve(e.ctx, pending.ApprovalID, "")
	require.NoError(t, err)
	_, err = e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	e.recordAndReplay(dir, "approved")

	// The session that held those calls: a rollback whose refund
	// cancellation waits for a manager, then call-ended and the post-call
	// workflow it started.
	res, err := e.agent.Rollback(e.ctx, e.session, "recording")
	require.NoError(t, err)
	require.Equal(t, workflows.UndoAwaitingApproval, res.Steps[0].Status)
	_, err = e.ops.Approve(e.ctx, e.pendingCompensation("cancel_refund").ID, "")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return e.undoStatus(res.Steps[0].UndoID) == string(ledger.UndoCompensated) },
		20*time.Second, 50*time.Millisecond)
	_, err = e.agent.End(e.ctx, e.session, apitype.EndRequest{Transcript: &mt.Transcript{Turns: []mt.Turn{
		{Speaker: "caller", Text: "Please call me back."},
	}}})
	require.NoError(t, err)
	e.waitPostCall()
	e.record(dir, workflows.SessionWorkflowID(e.session), "session_rollback_approval_end")
	e.record(dir, workflows.PostCallWorkflowID(e.session), "postcall")
}

// recordAndReplay exports an invocation's history to dir and replays it.
func (e *env) recordAndReplay(dir, name string) {
	e.t.Helper()
	e.record(dir, workflows.InvocationWorkflowID(e.key(name)), "invocation_"+name)
}

// record exports a workflow's history to dir/name.json and replays it
// against the current workflow code.
func (e *env) record(dir, workflowID, name string) {
	e.t.Helper()
	path := filepath.Join(dir, name+".json")
	e.exportHistory(workflowID, path)
	r, err := workflows.NewReplayer(testCodec.DataConverter(), testCodec.FailureConverter())
	require.NoError(e.t, err)
	require.NoError(e.t, r.ReplayWorkflowHistoryFromJSONFile(nil, path), name)
}

func (e *env) exportHistory(workflowID, path string) {
	e.t.Helper()
	waitClosed(e.ctx, e.t, e.temporal, workflowID)
	iter := e.temporal.GetWorkflowHistory(e.ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(e.t, err)
		hist.Events = append(hist.Events, ev)
	}
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	require.NoError(e.t, err)
	require.NoError(e.t, os.WriteFile(path, b, 0o644))
}

// waitClosed waits until a workflow has completed: an invocation is
// answered once its outcome is committed, which can be before its
// workflow's last task has run.
func waitClosed(ctx context.Context, t *testing.T, c client.Client, workflowID string) {
	t.Helper()
	iter := c.GetWorkflowHistory(ctx, workflowID, "", true, enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for iter.HasNext() {
		_, err := iter.Next()
		require.NoError(t, err, workflowID)
	}
}
