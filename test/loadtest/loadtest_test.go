//go:build loadtest

package loadtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

const (
	sessions        = 200
	callsPerSession = 10
	// refundEvery gives every n-th session one gated refund, so a quarter
	// of the sessions wait on the approval driver.
	refundEvery = 4
	// inFlight bounds the requests the client has open at once. Every
	// session stays live for the whole run; the bound only keeps two cores
	// from spending their time on scheduling instead of work.
	inFlight = 48

	callerNumber = "+14155550100"
	tenantID     = "t_100"
)

// call is one planned invocation and, once made, what came of it.
type call struct {
	session string
	key     string
	tool    string
	args    string
	final   apiclient.Response
}

// plan lays out a session's ten calls: reads, texts to the caller's own
// number (pre-approved by the catalog rule on session.caller_number),
// compensable work orders and, in some sessions, a refund that waits for a
// manager. Bodies and descriptions carry the operation key so an effect at
// a stand-in can be traced to the one call that caused it.
func plan(s int) []*call {
	session := fmt.Sprintf("load-%03d", s)
	calls := make([]*call, 0, callsPerSession)
	for i := range callsPerSession {
		key := fmt.Sprintf("%s:%02d", session, i)
		c := &call{session: session, key: key}
		switch {
		case i == callsPerSession-1 && s%refundEvery == 0:
			c.tool = "issue_refund"
			c.args = fmt.Sprintf(`{"tenant_id":%q,"amount_cents":%d,"reason":"load %s"}`, tenantID, 100+s, key)
		case i%3 == 0:
			c.tool = "lookup_tenant"
			c.args = fmt.Sprintf(`{"tenant_id":%q}`, tenantID)
		case i%3 == 1:
			c.tool = "send_sms"
			c.args = fmt.Sprintf(`{"to":%q,"body":"load %s"}`, callerNumber, key)
		default:
			c.tool = "create_work_order"
			c.args = fmt.Sprintf(`{"tenant_id":%q,"category":"other","description":"load %s","priority":"routine"}`, tenantID, key)
		}
		calls = append(calls, c)
	}
	return calls
}

func TestLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	// SQLite, not PostgreSQL, for the ledger: the embedded Temporal server
	// persists to SQLite in dev mode whatever the ledger is, so it sets the
	// pace on two cores; a SQLite ledger keeps the run self-contained and
	// makes the test prove the invariant under serialised writers, the
	// harder case for lease and claim contention.
	start := time.Now()
	// The SMS rule rests on the caller's number the sessions state, which
	// no stand-in signs.
	catalog := filepath.Join(t.TempDir(), "catalog.yaml")
	doc, err := tools.TrustingDeclaredFacts(tools.DemoCatalogYAML)
	require.NoError(t, err)
	// The run holds more sessions and waiting refunds at once than the
	// demo agent's caps allow: it measures throughput, not the caps.
	doc, err = tools.LiftingAgentCaps(doc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(catalog, doc, 0o600))
	d, err := server.Start(ctx, server.Config{
		Dev:          true,
		CatalogPath:  catalog,
		HTTPAddr:     "127.0.0.1:0",
		DataDir:      t.TempDir(),
		TemporalPort: port,
		Logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Stop(context.Background())) }()
	t.Logf("dev process up in %s at %s", time.Since(start).Round(time.Millisecond), d.URL())

	// One transport for every session, sized so the bounded requests reuse
	// connections instead of exhausting loopback ports.
	httpc := &http.Client{
		Timeout:   90 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: inFlight * 2, MaxConnsPerHost: inFlight * 2},
	}
	agent := apiclient.New(d.URL(), tools.DemoAgentKey, apiclient.Options{HTTPClient: httpc})
	ops := apiclient.New(d.URL(), tools.DemoOpsKey, apiclient.Options{HTTPClient: httpc})

	var all []*call
	bySession := make([][]*call, sessions)
	for s := range sessions {
		bySession[s] = plan(s)
		all = append(all, bySession[s]...)
	}

	driverCtx, stopDriver := context.WithCancel(ctx)
	approved := make(chan map[string]string, 1)
	go func() { approved <- approveAll(driverCtx, t, ops) }()

	load := time.Now()
	sem := make(chan struct{}, inFlight)
	var failed atomic.Int64
	var wg sync.WaitGroup
	for _, calls := range bySession {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runSession(ctx, agent, sem, calls); err != nil {
				failed.Add(1)
				t.Errorf("session %s: %v", calls[0].session, err)
			}
		}()
	}
	wg.Wait()
	stopDriver()
	approvals := <-approved
	elapsed := time.Since(load)
	require.Zero(t, failed.Load(), "sessions failed")

	v := verify(ctx, t, d.Store(), d.Standins(), ops, all, approvals)
	v.print(elapsed)
}

// runSession makes a session's calls in order, as an agent would, holding a
// slot of the client's bound only while a request is open. A refund comes
// back pending; the session waits for its final outcome like any other.
func runSession(ctx context.Context, agent *apiclient.Client, sem chan struct{}, calls []*call) error {
	for _, c := range calls {
		resp, err := withSlot(ctx, sem, func() (apiclient.Response, error) {
			return agent.Invoke(ctx, apitype.InvokeRequest{
				SessionID:      c.session,
				Tool:           c.tool,
				Args:           []byte(c.args),
				OperationKey:   c.key,
				SessionContext: map[string]string{"caller_number": callerNumber, "tenant_id": tenantID},
			})
		})
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.tool, c.key, err)
		}
		for resp.Pending {
			if err := sleep(ctx, resp.RetryAfter); err != nil {
				return fmt.Errorf("%s %s: still pending: %w", c.tool, c.key, err)
			}
			id := resp.InvocationID
			if resp, err = withSlot(ctx, sem, func() (apiclient.Response, error) { return agent.Invocation(ctx, id) }); err != nil {
				return fmt.Errorf("%s %s: %w", c.tool, c.key, err)
			}
		}
		c.final = resp
	}
	return nil
}

func withSlot(ctx context.Context, sem chan struct{}, f func() (apiclient.Response, error)) (apiclient.Response, error) {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return apiclient.Response{}, ctx.Err()
	}
	defer func() { <-sem }()
	return f()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// approveAll is the manager: it approves every pending request until ctx
// ends and returns what it approved, approval ID to invocation ID.
func approveAll(ctx context.Context, t *testing.T, ops *apiclient.Client) map[string]string {
	approved := map[string]string{}
	for ctx.Err() == nil {
		list, err := ops.Approvals(ctx, "pending")
		if err != nil && ctx.Err() == nil {
			t.Errorf("listing approvals: %v", err)
		}
		for _, a := range list.Approvals {
			if _, done := approved[a.ID]; done {
				continue
			}
			if _, err := ops.Approve(ctx, a.ID, "load test"); err != nil {
				if ctx.Err() == nil {
					t.Errorf("approving %s: %v", a.ID, err)
				}
				continue
			}
			approved[a.ID] = a.InvocationID
		}
		_ = sleep(ctx, 100*time.Millisecond)
	}
	return approved
}

// verdict holds the counts the run proved.
type verdict struct {
	sessions, invocations                    int
	byTool, terminal                         map[string]int
	sms, workOrders, refunds                 int
	smsReceipts, workOrderRcpts, refundRcpts int
	effectsTraced                            int
	approved                                 int
	findings                                 int
}

// verify reads the ledger, the stand-ins and the audit scan and checks each
// against the calls made. The stand-ins are read through their own state,
// never maestro's tables, so a receipt with no effect behind it (or an
// effect with no receipt) shows up as a difference between two sets.
func verify(ctx context.Context, t *testing.T, st ledger.Store, si *standin.Set, ops *apiclient.Client, calls []*call, approvals map[string]string) verdict {
	v := verdict{byTool: map[string]int{}, terminal: map[string]int{}}

	// Exactly one terminal outcome per call: one ledger row per operation
	// key, every row terminal, and the row the agent saw.
	rows := map[string][]ledger.Invocation{}
	for _, c := range calls {
		if _, seen := rows[c.session]; seen {
			continue
		}
		list, err := st.InvocationListBySession(ctx, c.session)
		require.NoError(t, err)
		rows[c.session] = list
	}
	perKey := map[string]int{}
	for _, list := range rows {
		for _, inv := range list {
			perKey[inv.OperationKey]++
			require.True(t, inv.State.Terminal(), "invocation %s (%s) is %s", inv.ID, inv.OperationKey, inv.State)
			v.terminal[string(inv.State)]++
		}
	}
	require.Len(t, perKey, len(calls), "ledger rows for operation keys")
	for _, c := range calls {
		require.Equal(t, 1, perKey[c.key], "ledger rows for %s", c.key)
		require.Equal(t, mt.InvocationSucceeded, c.final.State, "%s %s ended %s: %s", c.tool, c.key, c.final.State, c.final.Observation.Summary)
		v.byTool[c.tool]++
	}

	// Effects at the stand-ins equal committed receipts, by ID, and each
	// call's marker appears in exactly one effect.
	smsReceipts, woReceipts, refundReceipts := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, c := range calls {
		r := c.final.Observation.Receipt
		switch c.tool {
		case "send_sms":
			require.NotNil(t, r, "send_sms %s has no receipt", c.key)
			smsReceipts[r.Fields["message_sid"]] = true
		case "create_work_order":
			require.NotNil(t, r, "create_work_order %s has no receipt", c.key)
			woReceipts[r.ID] = true
		case "issue_refund":
			require.NotNil(t, r, "issue_refund %s has no receipt", c.key)
			refundReceipts[r.ID] = true
		}
	}
	messages, markers := map[string]bool{}, map[string]int{}
	for _, m := range si.Twilio.Messages() {
		messages[m.SID] = true
		markers[m.Body]++
	}
	workOrders := map[string]bool{}
	for _, w := range si.Sandbox.WorkOrders() {
		workOrders[w.ID] = true
		markers[w.Description]++
	}
	refunds := map[string]bool{}
	for _, r := range si.Sandbox.Refunds() {
		refunds[r.ID] = true
		markers[r.Reason]++
	}
	require.Equal(t, sorted(smsReceipts), sorted(messages), "Twilio messages vs send_sms receipts")
	require.Equal(t, sorted(woReceipts), sorted(workOrders), "sandbox work orders vs receipts")
	require.Equal(t, sorted(refundReceipts), sorted(refunds), "sandbox refunds vs receipts")
	for marker, n := range markers {
		require.Equal(t, 1, n, "effect %q happened %d times", marker, n)
	}

	// No lost approval: every approved request's invocation succeeded, and
	// every refund was approved by the driver.
	succeeded := map[string]bool{}
	for _, c := range calls {
		if c.final.State == mt.InvocationSucceeded {
			succeeded[c.final.InvocationID] = true
		}
	}
	for apr, inv := range approvals {
		require.True(t, succeeded[inv], "approval %s: invocation %s did not succeed", apr, inv)
	}
	require.Len(t, approvals, v.byTool["issue_refund"], "approvals vs refunds")

	rep, err := ops.Audit(ctx)
	require.NoError(t, err)
	require.True(t, rep.Clean, "audit findings: %+v", rep.Findings)

	v.sessions, v.invocations = len(rows), len(calls)
	v.effectsTraced = len(markers)
	v.sms, v.workOrders, v.refunds = len(messages), len(workOrders), len(refunds)
	v.smsReceipts, v.workOrderRcpts, v.refundRcpts = len(smsReceipts), len(woReceipts), len(refundReceipts)
	v.approved = len(approvals)
	v.findings = len(rep.Findings)
	return v
}

func (v verdict) print(elapsed time.Duration) {
	w := io.Writer(os.Stdout)
	fmt.Fprintf(w, "load: %d sessions × %d calls = %d invocations in %s (%.1f/s), at most %d requests in flight\n",
		v.sessions, callsPerSession, v.invocations, elapsed.Round(time.Millisecond), float64(v.invocations)/elapsed.Seconds(), inFlight)
	for _, tool := range sortedKeys(v.byTool) {
		fmt.Fprintf(w, "  %-18s %4d\n", tool, v.byTool[tool])
	}
	for _, state := range sortedKeys(v.terminal) {
		fmt.Fprintf(w, "  terminal %-9s %4d (one per operation key)\n", state, v.terminal[state])
	}
	fmt.Fprintf(w, "  Twilio messages    %4d = send_sms receipts %d\n", v.sms, v.smsReceipts)
	fmt.Fprintf(w, "  sandbox work orders %3d = receipts %d\n", v.workOrders, v.workOrderRcpts)
	fmt.Fprintf(w, "  sandbox refunds    %4d = receipts %d = approvals %d (none lost)\n", v.refunds, v.refundRcpts, v.approved)
	fmt.Fprintf(w, "  effects traced to exactly one call %d, duplicates 0\n", v.effectsTraced)
	fmt.Fprintf(w, "  audit findings     %4d\n", v.findings)
}

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
