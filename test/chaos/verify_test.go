//go:build chaos

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/ledger"
)

// figures is what the run proved, printed and written to results/chaos.json.
type figures struct {
	Profile     string         `json:"profile"`
	Calls       int            `json:"calls"`
	Sessions    int            `json:"sessions"`
	Kills       int            `json:"worker_kills"`
	APIRestarts int            `json:"api_restarts"`
	LoadSeconds float64        `json:"load_seconds"`
	P50Millis   int64          `json:"p50_ms"`
	P99Millis   int64          `json:"p99_ms"`
	ByTool      map[string]int `json:"calls_by_tool"`
	Terminal    map[string]int `json:"ledger_terminal_states"`
	Effects     map[string]int `json:"effects_by_kind"`
	Duplicates  int            `json:"duplicates"`
	Lost        int            `json:"lost"`
	Approved    int            `json:"approvals_approved"`
	Rejected    int            `json:"approvals_rejected"`
	TokensSpent int            `json:"approval_tokens_spent"`
	// ApprovalRequests counts requests; above Approved+Rejected when an
	// invocation's request was raised again.
	ApprovalRequests int `json:"approval_requests"`
	// OtherApprovals counts approved calls other than refunds: the
	// cancelled refunds of rolled-back sessions.
	OtherApprovals int `json:"approvals_other"`
	RolledBack     int `json:"sessions_rolled_back"`
	PostCall       int `json:"postcall_deliveries"`
	AuditFindings  int `json:"audit_findings"`

	// The faults beside Kills, the workers killed (two for a pair), and
	// APIRestarts, one for each API kill.
	KillPairs int `json:"worker_kill_pairs"`
	// APIKills are SIGKILLs of an API process holding requests.
	APIKills         int `json:"api_kills"`
	PGRestarts       int `json:"pg_restarts"`
	TemporalRestarts int `json:"temporal_restarts"`
	ProviderBursts   int `json:"provider_bursts"`
	// FaultSchedule is every fault injected, in the order they began.
	FaultSchedule []faultEvent `json:"fault_schedule"`
}

func (f *figures) latencies(calls []*call) {
	var ds []time.Duration
	for _, c := range calls {
		if c.tool != "issue_refund" { // a refund waits for a human
			ds = append(ds, c.latency)
		}
	}
	slices.Sort(ds)
	if len(ds) == 0 {
		return
	}
	f.P50Millis = ds[len(ds)/2].Milliseconds()
	f.P99Millis = ds[min(len(ds)-1, len(ds)*99/100)].Milliseconds()
}

func (f *figures) print() {
	fmt.Printf("chaos (%s): %d calls from %d sessions in %.1fs\n", f.Profile, f.Calls, f.Sessions, f.LoadSeconds)
	fmt.Printf("  faults: %d worker kills (SIGKILL; %d rounds two at once), %d API kills mid-request, %d PostgreSQL restarts, %d Temporal restarts, %d provider bursts\n",
		f.Kills, f.KillPairs, f.APIKills, f.PGRestarts, f.TemporalRestarts, f.ProviderBursts)
	for _, k := range sortedKeys(f.ByTool) {
		fmt.Printf("  calls %-18s %5d\n", k, f.ByTool[k])
	}
	for _, k := range sortedKeys(f.Terminal) {
		fmt.Printf("  final %-18s %5d\n", k, f.Terminal[k])
	}
	for _, k := range sortedKeys(f.Effects) {
		fmt.Printf("  effects %-16s %5d\n", k, f.Effects[k])
	}
	fmt.Printf("  duplicates %d, lost %d\n", f.Duplicates, f.Lost)
	fmt.Printf("  approval requests %d for refunds, %d approved compensations\n", f.ApprovalRequests, f.OtherApprovals)
	fmt.Printf("  approvals approved %d, rejected %d, approval tokens spent %d, none twice (pre-approved calls spend one too)\n", f.Approved, f.Rejected, f.TokensSpent)
	fmt.Printf("  sessions rolled back %d; post-call deliveries %d (one per session)\n", f.RolledBack, f.PostCall)
	fmt.Printf("  audit findings %d; latency p50 %dms, p99 %dms (refunds, which wait for a human, left out)\n",
		f.AuditFindings, f.P50Millis, f.P99Millis)
}

func (f *figures) write(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("error creating %s: %w", filepath.Dir(path), err)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("error encoding figures: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// effect is one effect as its provider stand-in holds it.
type effect struct {
	id, marker, status string
}

// verify waits, bounded, for the post-call work, then proves the run at
// the stand-ins, read through their own APIs, and in the ledger.
func verify(ctx context.Context, t *testing.T, c *cluster, prof profile, ops *apiclient.Client, bySession [][]*call, dec decisions) *figures {
	f := &figures{ByTool: map[string]int{}, Terminal: map[string]int{}, Effects: map[string]int{}}
	env := c.envMap()

	// Every session's message reaches the office once, by email, after the
	// call: wait for one per session.
	dsn := env["DATABASE_URL"]
	st, err := ledger.OpenPostgres(ctx, dsn)
	require.NoError(t, err)
	defer st.Close()
	var emails []string
	waited := time.Now()
	for {
		emails, err = sesEmails(ctx, env["SES_STORE_URL"])
		if err == nil && len(emails) >= len(bySession) {
			break
		}
		if time.Since(waited) > postCallWait {
			reportUndelivered(ctx, t, st, bySession, emails)
			break
		}
		require.NoError(t, sleep(ctx, time.Second))
	}
	t.Logf("post-call emails: %d after %s", len(emails), time.Since(waited).Round(time.Second))

	// Every invocation final, one ledger row per operation key.
	planned := map[string]*call{}
	for _, calls := range bySession {
		for _, cl := range calls {
			planned[cl.key] = cl
			f.ByTool[cl.tool]++
		}
	}
	perKey := map[string]int{}
	for _, calls := range bySession {
		require.Eventually(t, func() bool {
			list, err := st.InvocationListBySession(ctx, calls[0].session)
			if err != nil {
				return false
			}
			for _, inv := range list {
				if !inv.State.Terminal() {
					return false
				}
			}
			return true
		}, 2*time.Minute, 500*time.Millisecond, "session %s final", calls[0].session)
		list, err := st.InvocationListBySession(ctx, calls[0].session)
		require.NoError(t, err)
		for _, inv := range list {
			perKey[inv.OperationKey]++
			f.Terminal[string(inv.State)]++
		}
	}
	for s, calls := range bySession {
		for _, cl := range calls {
			require.Equal(t, 1, perKey[cl.key], "ledger rows for %s", cl.key)
			require.Equal(t, string(terminalForTool(cl.tool, s)), cl.state, "%s %s", cl.tool, cl.key)
		}
	}

	// Effects at the stand-ins equal the receipts, each traced to one call.
	sms, err := twilioMessages(ctx, env)
	require.NoError(t, err)
	orders, err := sandboxList(ctx, env, "/v1/work_orders", "description")
	require.NoError(t, err)
	refunds, err := sandboxList(ctx, env, "/v1/refunds", "reason")
	require.NoError(t, err)
	f.Effects["sms"], f.Effects["work_order"], f.Effects["refund"], f.Effects["email"] = len(sms), len(orders), len(refunds), len(emails)
	markers := map[string]int{}
	for _, list := range [][]effect{sms, orders, refunds} {
		for _, e := range list {
			markers[e.marker]++
		}
	}
	wantTool := map[string]string{"text": "send_sms", "order": "create_work_order", "refund": "issue_refund"}
	for marker, n := range markers {
		kind, key, _ := strings.Cut(marker, " ")
		cl, ok := planned[key]
		if !ok || cl.tool != wantTool[kind] {
			t.Errorf("effect %q traces to no call", marker)
			continue
		}
		if n > 1 {
			f.Duplicates += n - 1
		}
	}
	byID := map[string]effect{}
	for _, list := range [][]effect{sms, orders, refunds} {
		for _, e := range list {
			byID[e.id] = e
		}
	}
	for s, calls := range bySession {
		for _, cl := range calls {
			switch cl.tool {
			case "send_sms", "create_work_order":
			case "issue_refund":
				if rejected(s) {
					require.Empty(t, cl.receipt, "rejected refund %s has a receipt", cl.key)
					continue
				}
			default:
				continue
			}
			e, ok := byID[cl.receipt]
			if !ok || !strings.HasSuffix(e.marker, cl.key) {
				f.Lost++
				t.Errorf("%s %s: receipt %q has no effect at the provider", cl.tool, cl.key, cl.receipt)
				continue
			}
			undone := e.status == "cancelled"
			if cl.tool != "send_sms" && undone != rolledBack(s) {
				t.Errorf("%s %s: cancelled %v, session rolled back %v", cl.tool, cl.key, undone, rolledBack(s))
			}
		}
		if rolledBack(s) {
			f.RolledBack++
		}
	}
	require.Len(t, byID, len(sms)+len(orders)+len(refunds), "effect IDs are unique")
	require.Equal(t, f.ByTool["send_sms"], len(sms), "texts at Twilio")
	require.Equal(t, f.ByTool["create_work_order"], len(orders), "work orders at the sandbox")

	// Approvals: every approved refund happened once, no rejected one did.
	// An invocation whose approval request is raised again (its workflow
	// replayed after a kill, say) may be decided more than once; its
	// effect must still happen once, and one token be spent for it in all.
	f.Approved, f.Rejected = distinct(dec.approved), distinct(dec.rejected)
	f.ApprovalRequests = len(dec.approved) + len(dec.rejected)
	if f.ApprovalRequests != f.Approved+f.Rejected {
		t.Logf("approval requests %d for %d refunds: %v", f.ApprovalRequests, f.Approved+f.Rejected, reraised(dec))
	}
	require.Equal(t, f.Approved, len(refunds), "refunds at the sandbox vs approved refunds")
	require.Equal(t, f.ByTool["issue_refund"], f.Approved+f.Rejected, "every refund decided")
	f.OtherApprovals = distinct(dec.other)
	spent := tokensSpent(ctx, t, dsn)
	perInvocation := map[string]int{}
	for _, m := range []map[string]string{dec.approved, dec.other} {
		for id, inv := range m {
			perInvocation[inv] += spent[id]
		}
	}
	for inv, n := range perInvocation {
		require.Equal(t, 1, n, "approved invocation %s: tokens spent", inv)
	}
	for id := range dec.rejected {
		require.Zero(t, spent[id], "rejected approval %s: tokens spent", id)
	}
	for id, n := range spent {
		require.LessOrEqual(t, n, 1, "approval %s: tokens spent", id)
		f.TokensSpent += n
	}

	// Post-call: one email per session carrying its message.
	for _, calls := range bySession {
		marker := "message " + calls[1].key
		n := 0
		for _, e := range emails {
			if strings.Contains(e, marker) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("session %s: its message was emailed %d times", calls[0].session, n)
		}
		if n > 1 {
			f.Duplicates += n - 1
		}
		if n == 0 {
			f.Lost++
		}
		f.PostCall += min(n, 1)
	}

	rep, err := ops.Audit(ctx)
	require.NoError(t, err)
	f.AuditFindings = len(rep.Findings)
	require.True(t, rep.Clean, "audit findings: %+v", rep.Findings)
	require.Zero(t, f.Duplicates, "duplicate effects")
	require.Zero(t, f.Lost, "lost effects")
	return f
}

// distinct counts the invocations among decisions.
func distinct(decided map[string]string) int {
	set := map[string]bool{}
	for _, inv := range decided {
		set[inv] = true
	}
	return len(set)
}

// reraised lists the invocations with more than one approval request.
func reraised(dec decisions) map[string]int {
	n := map[string]int{}
	for _, m := range []map[string]string{dec.approved, dec.rejected} {
		for _, inv := range m {
			n[inv]++
		}
	}
	for inv, c := range n {
		if c == 1 {
			delete(n, inv)
		}
	}
	return n
}

// tokensSpent reads, from the ledger's own table, how many approval
// tokens each approval request had spent.
func tokensSpent(ctx context.Context, t *testing.T, dsn string) map[string]int {
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT approval_id, count(*) FILTER (WHERE used_at IS NOT NULL) FROM approval_tokens GROUP BY approval_id")
	require.NoError(t, err)
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		require.NoError(t, rows.Scan(&id, &n))
		out[id] = n
	}
	require.NoError(t, rows.Err())
	return out
}

// postCallWait bounds the wait for post-call work after the last call. A
// worker killed mid-delivery is noticed by its heartbeat timeout, a minute,
// and the kills can land on one delivery more than once.
const postCallWait = 8 * time.Minute

// reportUndelivered says, for each session whose message has not been
// emailed, what the ledger holds for it.
func reportUndelivered(ctx context.Context, t *testing.T, st ledger.Store, bySession [][]*call, emails []string) {
	t.Errorf("post-call: %d emails for %d sessions after %s", len(emails), len(bySession), postCallWait)
	for _, calls := range bySession {
		marker := "message " + calls[1].key
		if slices.ContainsFunc(emails, func(e string) bool { return strings.Contains(e, marker) }) {
			continue
		}
		list, err := st.InvocationListBySession(ctx, calls[0].session)
		if err != nil {
			t.Errorf("session %s: %v", calls[0].session, err)
			continue
		}
		var rows []string
		for _, inv := range list {
			if !strings.HasPrefix(inv.OperationKey, calls[0].session+":") {
				rows = append(rows, fmt.Sprintf("%s %s %s", inv.OperationKey, inv.Tool, inv.State))
			}
		}
		t.Errorf("session %s: no email; its other invocations: %v", calls[0].session, rows)
	}
}

func (c *cluster) envMap() map[string]string {
	m := map[string]string{}
	for _, kv := range c.env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func getJSON(ctx context.Context, u string, auth func(*http.Request), out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if auth != nil {
		auth(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func sesEmails(ctx context.Context, storeURL string) ([]string, error) {
	var store struct {
		Emails []json.RawMessage `json:"emails"`
	}
	if err := getJSON(ctx, storeURL+"/store", nil, &store); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(store.Emails))
	for _, e := range store.Emails {
		out = append(out, string(e))
	}
	return out, nil
}

func twilioMessages(ctx context.Context, env map[string]string) ([]effect, error) {
	base, sid := env["TWILIO_BASE_URL"], env["TWILIO_ACCOUNT_SID"]
	auth := func(r *http.Request) { r.SetBasicAuth(sid, env["TWILIO_AUTH_TOKEN"]) }
	next := "/2010-04-01/Accounts/" + sid + "/Messages.json?PageSize=1000"
	var out []effect
	for next != "" {
		var page struct {
			Messages []struct {
				SID  string `json:"sid"`
				Body string `json:"body"`
			} `json:"messages"`
			NextPageURI *string `json:"next_page_uri"`
		}
		if err := getJSON(ctx, base+next, auth, &page); err != nil {
			return nil, err
		}
		for _, m := range page.Messages {
			out = append(out, effect{id: m.SID, marker: m.Body})
		}
		next = ""
		if page.NextPageURI != nil {
			next = *page.NextPageURI
		}
	}
	return out, nil
}

func sandboxList(ctx context.Context, env map[string]string, path, markerField string) ([]effect, error) {
	base := env["MAESTRO_HTTP_SERVICE_SANDBOX_URL"]
	auth := func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+env["MAESTRO_HTTP_SERVICE_SANDBOX_TOKEN"])
	}
	var out []effect
	after := ""
	for {
		q := url.Values{"limit": {"100"}}
		if after != "" {
			q.Set("starting_after", after)
		}
		var page struct {
			Data    []map[string]any `json:"data"`
			HasMore bool             `json:"has_more"`
		}
		if err := getJSON(ctx, base+path+"?"+q.Encode(), auth, &page); err != nil {
			return nil, err
		}
		for _, d := range page.Data {
			id, _ := d["id"].(string)
			marker, _ := d[markerField].(string)
			status, _ := d["status"].(string)
			out = append(out, effect{id: id, marker: marker, status: status})
			after = id
		}
		if !page.HasMore {
			return out, nil
		}
	}
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
