package server_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/codec"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// TestHistoriesHoldNoCallDataInClear reads the histories of a real call,
// its text, its tenant lookup, its message, its session and its post-call
// work, through the Temporal frontend with a client that has no codec, as
// anyone with access to Temporal would. None of the call's personal data
// may be there; decoded with the codec, all but the transcript is, so the scan
// looks where the data is. The transcript stays in the ledger.
func TestHistoriesHoldNoCallDataInClear(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const (
		phone      = "+14155550100"
		smsBody    = "Your plumber Ignatius arrives at nine"
		message    = "Please renew the parking permit for the blue hatchback"
		tenantName = "Maria Lopez"
		transcript = "The radiator in the nursery is hissing loudly"
	)

	req := invokeRequest(e.session, "send_sms", e.key("sms"), `{"to":"`+phone+`","body":"`+smsBody+`"}`)
	req.SessionContext = map[string]string{"caller_number": phone}
	sms, err := e.agent.Invoke(e.ctx, req)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, sms.State, "%+v", sms.Observation)
	lookup, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.Contains(t, string(lookup.Observation.Payload), tenantName)
	msg, err := e.invoke("take_message", e.key("msg"), `{"message":"`+message+`","callback_number":"`+phone+`"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationRecorded, msg.State)
	end, err := e.agent.End(e.ctx, e.session, apitype.EndRequest{Transcript: &mt.Transcript{Turns: []mt.Turn{
		{Speaker: "agent", Text: "How can I help?", At: time.Now()},
		{Speaker: "caller", Text: transcript, At: time.Now()},
	}}})
	require.NoError(t, err)
	require.True(t, end.Ended)
	e.waitPostCall()

	// A client as an outsider has it: no codec.
	plain := dialTemporal(t, client.Options{})
	ids := []string{
		workflows.InvocationWorkflowID(e.key("sms")),
		workflows.InvocationWorkflowID(e.key("lookup")),
		workflows.InvocationWorkflowID(e.key("msg")),
		workflows.SessionWorkflowID(e.session),
		workflows.PostCallWorkflowID(e.session),
	}
	var raw, decoded bytes.Buffer
	for _, id := range ids {
		hist := history(e.ctx, t, plain, id)
		b, err := proto.Marshal(hist)
		require.NoError(t, err)
		raw.Write(b)
		requireEveryPayloadEncrypted(e.ctx, t, id, hist)

		require.NoError(t, proxy.VisitPayloads(e.ctx, hist, proxy.VisitPayloadsOptions{
			Visitor: func(_ *proxy.VisitPayloadsContext, p []*commonpb.Payload) ([]*commonpb.Payload, error) {
				return testCodec.Decode(p)
			},
			SkipSearchAttributes: true,
		}))
		b, err = proto.Marshal(hist)
		require.NoError(t, err)
		decoded.Write(b)
	}
	for _, secret := range []string{phone, smsBody, message, tenantName, transcript} {
		require.NotContains(t, raw.String(), secret, "a history holds call data in clear")
	}
	for _, secret := range []string{phone, smsBody, message, tenantName} {
		require.Contains(t, decoded.String(), secret, "decoded, the histories hold the call's data")
	}
	// The transcript stays in the ledger: the post-call judge reads it
	// there, so no history holds it, even decoded.
	require.NotContains(t, decoded.String(), transcript, "a history holds the transcript")
}

// history reads a workflow's whole history through c.
func history(ctx context.Context, t *testing.T, c client.Client, workflowID string) *historypb.History {
	t.Helper()
	waitClosed(ctx, t, c, workflowID)
	iter := c.GetWorkflowHistory(ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err, workflowID)
		hist.Events = append(hist.Events, ev)
	}
	require.NotEmpty(t, hist.Events, workflowID)
	return hist
}

// requireEveryPayloadEncrypted checks each payload of a history, failures'
// messages included, is encrypted. Search attributes are not payloads a
// codec sees; maestro sets none.
func requireEveryPayloadEncrypted(ctx context.Context, t *testing.T, workflowID string, hist *historypb.History) {
	t.Helper()
	seen := 0
	require.NoError(t, proxy.VisitPayloads(ctx, hist, proxy.VisitPayloadsOptions{
		Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
			for _, p := range ps {
				seen++
				require.Equal(t, codec.Encoding, string(p.GetMetadata()[converter.MetadataEncoding]), "%s: a payload is not encrypted", workflowID)
			}
			return ps, nil
		},
		SkipSearchAttributes: true,
	}))
	require.NotZero(t, seen, workflowID)
	for _, ev := range hist.Events {
		if f := failureOf(ev); f != nil {
			require.Equal(t, "Encoded failure", f.GetMessage(), "%s: a failure's message is in clear", workflowID)
		}
	}
}

// failureOf is the failure an event records, if any.
func failureOf(ev *historypb.HistoryEvent) *failurepb.Failure {
	switch {
	case ev.GetActivityTaskFailedEventAttributes() != nil:
		return ev.GetActivityTaskFailedEventAttributes().GetFailure()
	case ev.GetActivityTaskTimedOutEventAttributes() != nil:
		return ev.GetActivityTaskTimedOutEventAttributes().GetFailure()
	case ev.GetWorkflowExecutionFailedEventAttributes() != nil:
		return ev.GetWorkflowExecutionFailedEventAttributes().GetFailure()
	case ev.GetChildWorkflowExecutionFailedEventAttributes() != nil:
		return ev.GetChildWorkflowExecutionFailedEventAttributes().GetFailure()
	case ev.GetWorkflowTaskFailedEventAttributes() != nil:
		return ev.GetWorkflowTaskFailedEventAttributes().GetFailure()
	}
	return nil
}
