package server_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// floodKey belongs to a second agent that may ask for refunds without
// waiting for a decision, up to floodCap of them at once.
const (
	floodKey = "flood-agent-key-0123456789abcdef"
	floodCap = 500
)

// withFloodAgent adds the flooding agent beside the demo's voice agent.
func withFloodAgent(o *options) {
	o.catalog = []byte(strings.Replace(string(tools.DemoCatalogYAML), "agents:\n",
		"agents:\n  - id: flood-agent\n    api_key_sha256: "+tools.HashKey(floodKey)+
			"\n    while_awaiting_approval: allow_writes\n    max_open_approvals: "+fmt.Sprint(floodCap)+
			"\n    allow: [issue_refund]\n", 1))
}

// An agent opening 500 approval requests, as many as its cap allows, does
// not hide a later legitimate one: it is found by filter, by paging to it,
// counted in the total, and decided. The flooder's next request is refused.
func TestFloodedQueueStillShowsTheRealRequest(t *testing.T) {
	t.Parallel()
	e := setup(t, withFloodAgent)
	flood := apiclient.New(e.url, floodKey, apiclient.Options{})

	// Ten callers' worth of sessions, fifty junk refunds each, sent at once.
	const sessions, workers = 10, 16
	jobs := make(chan int)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				req := invokeRequest(fmt.Sprintf("%s-flood-%d", e.session, i%sessions), "issue_refund", fmt.Sprintf("%s:junk-%d", e.session, i),
					fmt.Sprintf(`{"tenant_id":"t_%d","amount_cents":%d,"reason":"junk"}`, 100+i, 1+i))
				resp, err := flood.Invoke(e.ctx, req)
				if err == nil && !resp.Pending {
					err = fmt.Errorf("junk %d was not left waiting: %+v", i, resp.Observation)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range floodCap {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	require.Empty(t, errs)

	// The flooder is at its cap: one more is refused before it is recorded.
	_, err := flood.Invoke(e.ctx, invokeRequest(e.session+"-flood-0", "issue_refund", e.session+":junk-over",
		`{"tenant_id":"t_1","amount_cents":1,"reason":"junk"}`))
	obs := requireRefusal(t, err, http.StatusTooManyRequests, mt.CodeAgentCapReached)
	require.Contains(t, obs.Summary, "max_open_approvals is 500")
	_, err = e.store.InvocationGetByKey(e.ctx, e.session+":junk-over")
	require.Error(t, err, "nothing was recorded")

	// The caller's real refund comes after all of it.
	real := e.requestRefund("real-refund")

	// Found by filter: only the voice agent's request.
	mine, err := e.ops.ApprovalPage(e.ctx, apitype.ListQuery{Status: "pending", Agent: "voice-agent"})
	require.NoError(t, err)
	require.Equal(t, 1, mine.Total)
	require.Equal(t, real.ApprovalID, mine.Approvals[0].ID)

	// Found by paging to it, and counted.
	q := apitype.ListQuery{Status: "pending", Tool: "issue_refund", Limit: 200}
	var seen []string
	found := false
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5, "three pages of 200 hold 501 requests")
		page, err := e.ops.ApprovalPage(e.ctx, q)
		require.NoError(t, err)
		require.Equal(t, floodCap+1, page.Total, "the total counts every request")
		for _, a := range page.Approvals {
			seen = append(seen, a.ID)
			found = found || a.ID == real.ApprovalID
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	require.True(t, found, "the real request is on a page")
	require.Len(t, seen, floodCap+1, "each request once")
	require.Equal(t, real.ApprovalID, seen[len(seen)-1], "oldest first: the latest request is last")

	// The console finds it the same ways.
	o := e.signIn(tools.DemoOpsKey)
	status, body := o.get("/console/approvals?" + url.Values{"agent": {"voice-agent"}}.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, real.ApprovalID)
	require.Contains(t, textOf(body), "Showing 1 of 1 matching")
	next, pages := "/console/approvals", 0
	for found = false; next != "" && !found; pages++ {
		status, body = o.get(next)
		require.Equal(t, http.StatusOK, status, next)
		if pages == 0 {
			require.Contains(t, textOf(body), fmt.Sprintf("Showing 50 of %d", floodCap+1))
		}
		found = strings.Contains(body, real.ApprovalID)
		next = ""
		if m := nextLink.FindStringSubmatch(body); m != nil {
			next = html.UnescapeString(m[1])
		}
	}
	require.True(t, found, "paging through the console reaches the real request")
	require.Equal(t, 11, pages, "501 requests, 50 a page")

	// And decided: the refund runs.
	a, err := e.ops.Approve(e.ctx, real.ApprovalID, "duplicate payment confirmed")
	require.NoError(t, err)
	require.Equal(t, "approved", a.Status)
	done, err := e.agent.Wait(e.ctx, real.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	require.Equal(t, 1, e.standins.Sandbox.CountRefunds(), "only the decided refund ran")

	// Operators see the flooder's refusal.
	refusals, err := e.ops.Refusals(e.ctx, apitype.ListQuery{Status: string(mt.CodeAgentCapReached), Agent: "flood-agent"})
	require.NoError(t, err)
	require.Equal(t, 1, refusals.Total)
	require.Contains(t, refusals.Refusals[0].Detail, "max_open_approvals")
}

// nextLink is a console listing's link to its next page.
var nextLink = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)

// withTightCaps caps the voice agent at two open requests and three live
// sessions.
func withTightCaps(o *options) {
	o.catalog = []byte(strings.Replace(string(tools.DemoCatalogYAML), "    while_awaiting_approval: strict\n",
		"    while_awaiting_approval: allow_writes\n    max_open_approvals: 2\n    max_live_sessions: 3\n", 1))
}

// A call past either cap is refused with an observation naming the cap,
// its value and the stop condition; nothing runs; the refusal is listed
// for operators; a decision or an ended session makes room again.
func TestAgentCapsRefuseAndRecover(t *testing.T) {
	t.Parallel()
	e := setup(t, withTightCaps)

	first := e.requestRefund("refund-1")
	e.requestRefund("refund-2")
	_, err := e.invoke("issue_refund", e.key("refund-3"), `{"tenant_id":"t_100","amount_cents":300,"reason":"third"}`)
	obs := requireRefusal(t, err, http.StatusTooManyRequests, mt.CodeAgentCapReached)
	require.Contains(t, obs.Summary, "max_open_approvals is 2")
	require.Contains(t, obs.NextActions.StopCondition, "until an operator has decided")
	require.JSONEq(t, `{"cap":"max_open_approvals","limit":2,"held":2}`, string(obs.Payload))

	// A re-sent request is answered, not refused; a lookup still runs.
	again, err := e.invoke("issue_refund", e.key("refund-1"), refundArgs)
	require.NoError(t, err)
	require.Equal(t, first.InvocationID, again.InvocationID)
	_, err = e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)

	// Rejecting one makes room.
	_, err = e.ops.Reject(e.ctx, first.ApprovalID, "not owed")
	require.NoError(t, err)
	// The decision is committed before the answer, so the place is free
	// at once.
	_, err = e.agent.Invoke(e.ctx, invokeRequest(e.session+"-other", "issue_refund", e.key("refund-3"),
		`{"tenant_id":"t_100","amount_cents":300,"reason":"third"}`))
	require.NoError(t, err, "a decided request frees its place")

	// Sessions: the test's, the other, and one more fill the cap of three.
	_, err = e.agent.Invoke(e.ctx, invokeRequest(e.session+"-third", "lookup_tenant", e.key("lookup-3"), `{"tenant_id":"t_100"}`))
	require.NoError(t, err)
	_, err = e.agent.Invoke(e.ctx, invokeRequest(e.session+"-fourth", "lookup_tenant", e.key("lookup-4"), `{"tenant_id":"t_100"}`))
	obs = requireRefusal(t, err, http.StatusTooManyRequests, mt.CodeAgentCapReached)
	require.Contains(t, obs.Summary, "max_live_sessions is 3")
	require.Contains(t, obs.NextActions.StopCondition, "ended")
	_, err = e.store.SessionGet(e.ctx, e.session+"-fourth")
	require.Error(t, err, "the refused session was not opened")

	_, err = e.agent.End(e.ctx, e.session+"-third", apitype.EndRequest{})
	require.NoError(t, err)
	_, err = e.agent.Invoke(e.ctx, invokeRequest(e.session+"-fourth", "lookup_tenant", e.key("lookup-4b"), `{"tenant_id":"t_100"}`))
	require.NoError(t, err, "an ended session frees its place")

	refusals, err := e.ops.Refusals(e.ctx, apitype.ListQuery{Status: string(mt.CodeAgentCapReached)})
	require.NoError(t, err)
	require.Equal(t, 2, refusals.Total, "both refusals are listed for operators")
	require.Contains(t, refusals.Refusals[0].Detail, "max_live_sessions", "newest first")
	require.Contains(t, refusals.Refusals[1].Detail, "max_open_approvals")

	// Sessions are listed for operators too, and agents may not list them.
	list, err := e.ops.Sessions(e.ctx, apitype.ListQuery{Agent: "voice-agent", Status: string(mt.SessionEnded)})
	require.NoError(t, err)
	require.Equal(t, 1, list.Total)
	require.Equal(t, e.session+"-third", list.Sessions[0].SessionID)
	_, err = e.agent.Sessions(e.ctx, apitype.ListQuery{})
	requireRefusal(t, err, http.StatusUnauthorized, mt.CodeUnauthorized)

	// The console filters the reconciliation queue and the approval queue,
	// and refuses an age it does not offer.
	o := e.signIn(tools.DemoOpsKey)
	status, body := o.get("/console/reconciliations?" + url.Values{"tool": {"issue_refund"}, "age": {"1h"}}.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, textOf(body), "Showing 0 of 0 matching")
	require.Contains(t, body, `<option value="1h" selected>`)
	status, body = o.get("/console/approvals?" + url.Values{"tool": {"issue_refund"}}.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, textOf(body), "Showing 2 of 2 matching", "refund-2 and refund-3 wait")
	require.Contains(t, body, `data-poll="/console/approvals/queue?tool=issue_refund"`, "the live refresh keeps the filter")
	status, body = o.get("/console/approvals?age=yesterday")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, textOf(body), "age filter")
}

// Bad paging parameters are refused naming the parameter.
func TestListingsRefuseBadPaging(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, c := range []struct {
		q     apitype.ListQuery
		param string
	}{
		{apitype.ListQuery{Limit: 501}, "limit"},
		{apitype.ListQuery{Limit: -1}, "limit"},
		{apitype.ListQuery{Cursor: "bm90LWEtY3Vyc29y"}, "cursor"},
		{apitype.ListQuery{NewerThan: "yesterday"}, "newer_than"},
		{apitype.ListQuery{OlderThan: "-5m"}, "older_than"},
		{apitype.ListQuery{Status: "maybe"}, "status"},
	} {
		_, err := e.ops.ApprovalPage(e.ctx, c.q)
		obs := requireRefusal(t, err, http.StatusBadRequest, mt.CodeInvalidRequest)
		require.Contains(t, obs.NextActions.RootCause, c.param, "%+v", c.q)
		_, err = e.ops.ReconciliationPage(e.ctx, c.q)
		requireRefusal(t, err, http.StatusBadRequest, mt.CodeInvalidRequest)
	}
	for _, bad := range []apitype.ListQuery{{Limit: 0, Cursor: "x"}, {Tool: strings.Repeat("t", 201)}} {
		_, err := e.ops.Sessions(e.ctx, bad)
		requireRefusal(t, err, http.StatusBadRequest, mt.CodeInvalidRequest)
		_, err = e.ops.Refusals(e.ctx, bad)
		requireRefusal(t, err, http.StatusBadRequest, mt.CodeInvalidRequest)
	}
}
