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

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
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

	// HeldCalls ended needs_reconciliation, listed for a human;
	// HeldWithEffect of them have their effect at the provider, which is
	// theirs to settle, neither lost nor duplicated.
	HeldCalls      int `json:"held_for_human_calls"`
	HeldWithEffect int `json:"held_calls_with_effect"`
	// FailedCalls ended failed where nothing went wrong they succeed;
	// nothing of theirs is at a provider.
	FailedCalls int `json:"failed_calls"`
	// HeldPostCall counts sessions whose message no channel delivered,
	// held for a human and listed.
	HeldPostCall int `json:"held_for_human_postcall"`
	// PostCallResent counts extra emails of deliveries whose unknown
	// outcome the tool's on_unknown policy settled by sending again.
	PostCallResent  int `json:"postcall_resent_on_unknown"`
	Reconciliations int `json:"reconciliations_listed"`
	// Compensations counts cancels that reached the sandbox's work orders
	// and refunds: once each for the rolled-back sessions' effects.
	Compensations     int `json:"compensations"`
	ApprovalDecisions int `json:"approval_decisions"`
	DecidedTwice      int `json:"approvals_decided_twice"`
	MoneyEffects      int `json:"money_effects"`
	MoneyUnmatched    int `json:"money_effects_without_spent_token"`
	NonFinal          int `json:"invocations_non_final"`
	// Unaccounted counts calls and effects no rule of the proof accounts
	// for; each is reported.
	Unaccounted int `json:"unaccounted"`
	// FaultRequests is how many requests each stand-in and way failed.
	FaultRequests map[string]int `json:"fault_requests"`
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
	fmt.Printf("  duplicates %d, lost %d, unaccounted %d, non-final %d\n", f.Duplicates, f.Lost, f.Unaccounted, f.NonFinal)
	fmt.Printf("  calls held for a human %d (%d with their effect at the provider), failed with nothing at the provider %d; reconciliations listed %d\n",
		f.HeldCalls, f.HeldWithEffect, f.FailedCalls, f.Reconciliations)
	fmt.Printf("  approval decisions %d, decided twice %d; refunds %d, without a spent token %d; compensations %d\n",
		f.ApprovalDecisions, f.DecidedTwice, f.MoneyEffects, f.MoneyUnmatched, f.Compensations)
	for _, k := range sortedKeys(f.FaultRequests) {
		fmt.Printf("  fault %-24s %3d requests\n", k, f.FaultRequests[k])
	}
	fmt.Printf("  approval requests %d for refunds, %d approved compensations\n", f.ApprovalRequests, f.OtherApprovals)
	fmt.Printf("  approvals approved %d, rejected %d, approval tokens spent %d, none twice (pre-approved calls spend one too)\n", f.Approved, f.Rejected, f.TokensSpent)
	fmt.Printf("  sessions rolled back %d; post-call delivered %d, held for a human %d, resent on an unknown outcome %d\n",
		f.RolledBack, f.PostCall, f.HeldPostCall, f.PostCallResent)
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

// effect is one effect as its provider stand-in holds it; cancels counts
// the cancel requests that reached it, which the sandbox keeps.
type effect struct {
	id, marker, status string
	cancels            int
}

// verify waits, bounded, for the post-call work, then proves the run at
// the stand-ins, read through their own APIs, and in the ledger: no effect
// twice, none lost, every effect whose call did not succeed held for a
// human and listed, every approval decided at most once and every refund
// paid on a spent token, every compensation run once, every invocation
// final and the audit clean.
func verify(ctx context.Context, t *testing.T, c *cluster, prof profile, ops *apiclient.Client, bySession [][]*call, dec decisions) *figures {
	f := &figures{ByTool: map[string]int{}, Terminal: map[string]int{}, Effects: map[string]int{}}
	env := c.envMap()
	dsn := env["DATABASE_URL"]
	st, err := ledger.OpenPostgres(ctx, dsn)
	require.NoError(t, err)
	defer st.Close()

	// Every session's message reaches the office once after the call, or
	// is held for a human and listed: wait until each is one or the other.
	var emails []string
	var sms []effect
	var q queue
	// A delivery whose attempt failed is tried again after a backoff, so
	// a delivered message is settled only once its session's post-call
	// work is over. A held one waits for a human, whom the run has not:
	// listed, it is settled.
	settled := func(calls []*call) bool {
		if _, held := q.postCall[calls[0].session]; held {
			return true
		}
		if deliveriesOf("message "+calls[1].key, emails, sms) == 0 {
			return false
		}
		s, err := ops.Session(ctx, calls[0].session)
		return err == nil && s.PostCallStatus != "running" && s.PostCallStatus != ""
	}
	waited := time.Now()
	for {
		emails, sms, q, err = postCallState(ctx, env, ops)
		if err == nil && !slices.ContainsFunc(bySession, func(calls []*call) bool { return !settled(calls) }) {
			break
		}
		if time.Since(waited) > postCallWait {
			reportUndelivered(ctx, t, st, bySession, settled)
			break
		}
		require.NoError(t, sleep(ctx, time.Second))
	}
	t.Logf("post-call: %d emails, %d held after %s", len(emails), len(q.postCall), time.Since(waited).Round(time.Second))

	rows := finalRows(ctx, t, st, f, bySession)

	// What is held is read once every invocation is final, so a call's
	// state and its listing are read from the same settled ledger.
	list, err := reconciliationQueue(ctx, ops)
	require.NoError(t, err)
	q = indexQueue(list)
	f.Reconciliations = len(list)
	sms, err = twilioMessages(ctx, env)
	require.NoError(t, err)
	orders, err := sandboxList(ctx, env, "/v1/work_orders", "description")
	require.NoError(t, err)
	refunds, err := sandboxList(ctx, env, "/v1/refunds", "reason")
	require.NoError(t, err)
	emails, err = sesEmails(ctx, env["SES_STORE_URL"])
	require.NoError(t, err)
	f.Effects["sms"], f.Effects["work_order"], f.Effects["refund"], f.Effects["email"] = len(sms), len(orders), len(refunds), len(emails)
	byID := map[string]bool{}
	for _, list := range [][]effect{sms, orders, refunds} {
		for _, e := range list {
			byID[e.id] = true
		}
	}
	require.Len(t, byID, len(sms)+len(orders)+len(refunds), "effect IDs are unique")

	effects := traceEffects(t, f, bySession, sms, orders, refunds)
	for s, calls := range bySession {
		for _, cl := range calls {
			f.account(t, s, cl, rows[cl.key], effects[cl.key], q)
		}
		if rolledBack(s) {
			f.RolledBack++
		}
	}
	f.approvals(ctx, t, dsn, bySession, dec, effects)
	f.postCall(ctx, t, ops, bySession, emails, sms, q)

	rep, err := ops.Audit(ctx)
	require.NoError(t, err)
	f.AuditFindings = len(rep.Findings)
	require.True(t, rep.Clean, "audit findings: %+v", rep.Findings)
	require.Zero(t, f.NonFinal, "invocations left non-final")
	require.Zero(t, f.Duplicates, "duplicate effects")
	require.Zero(t, f.Lost, "lost effects")
	require.Zero(t, f.Unaccounted, "calls or effects no rule accounts for")
	require.Zero(t, f.DecidedTwice, "approvals decided more than once")
	require.Zero(t, f.MoneyUnmatched, "refunds without a spent token")
	return f
}

// postCallState reads what the post-call wait watches: the office's
// emails, the texts (a fallback channel's among them) and what is held.
func postCallState(ctx context.Context, env map[string]string, ops *apiclient.Client) ([]string, []effect, queue, error) {
	emails, err := sesEmails(ctx, env["SES_STORE_URL"])
	if err != nil {
		return nil, nil, queue{}, err
	}
	sms, err := twilioMessages(ctx, env)
	if err != nil {
		return nil, nil, queue{}, err
	}
	list, err := reconciliationQueue(ctx, ops)
	if err != nil {
		return nil, nil, queue{}, err
	}
	return emails, sms, indexQueue(list), nil
}

// finalRows waits, bounded, for every session's invocations to be final,
// checks there is one ledger row per operation key and returns the planned
// calls' rows by key.
func finalRows(ctx context.Context, t *testing.T, st ledger.Store, f *figures, bySession [][]*call) map[string]ledger.Invocation {
	rows := map[string]ledger.Invocation{}
	perKey := map[string]int{}
	for _, calls := range bySession {
		session := calls[0].session
		final := func() bool {
			list, err := st.InvocationListBySession(ctx, session)
			return err == nil && !slices.ContainsFunc(list, func(inv ledger.Invocation) bool { return !inv.State.Terminal() })
		}
		for waited := time.Now(); !final() && time.Since(waited) < 2*time.Minute; {
			require.NoError(t, sleep(ctx, 500*time.Millisecond))
		}
		list, err := st.InvocationListBySession(ctx, session)
		require.NoError(t, err)
		for _, inv := range list {
			perKey[inv.OperationKey]++
			f.Terminal[string(inv.State)]++
			rows[inv.OperationKey] = inv
			if !inv.State.Terminal() {
				f.NonFinal++
				t.Errorf("%s %s is still %s", inv.Tool, inv.OperationKey, inv.State)
			}
		}
	}
	for _, calls := range bySession {
		for _, cl := range calls {
			f.ByTool[cl.tool]++
			require.Equal(t, 1, perKey[cl.key], "ledger rows for %s", cl.key)
		}
	}
	return rows
}

// traceEffects traces every effect at the stand-ins to the one call whose
// marker it carries, and counts an effect traced to a call twice as a
// duplicate. A text carrying a session's message is a fallback channel's
// post-call delivery, counted with the post-call work.
func traceEffects(t *testing.T, f *figures, bySession [][]*call, sms, orders, refunds []effect) map[string][]effect {
	planned := map[string]*call{}
	for _, calls := range bySession {
		for _, cl := range calls {
			planned[cl.key] = cl
		}
	}
	wantTool := map[string]string{"text": "send_sms", "order": "create_work_order", "refund": "issue_refund"}
	out := map[string][]effect{}
	for _, list := range [][]effect{sms, orders, refunds} {
		for _, e := range list {
			kind, key, _ := strings.Cut(e.marker, " ")
			if cl, ok := planned[key]; ok && cl.tool == wantTool[kind] {
				out[key] = append(out[key], e)
				continue
			}
			if !strings.Contains(e.marker, "message chaos-") {
				f.Unaccounted++
				t.Errorf("effect %s %q traces to no call", e.id, e.marker)
			}
		}
	}
	for key, effs := range out {
		if len(effs) > 1 {
			f.Duplicates += len(effs) - 1
			t.Errorf("%s: %d effects at the provider", key, len(effs))
		}
	}
	return out
}

// account proves one call. It ends as it does when nothing goes wrong, or
// held for a human and listed (its effect at the provider or not), or
// failed with nothing at the provider; a succeeded call's receipt is at
// its provider; and a work order or refund is cancelled once if its
// session was rolled back, never otherwise.
func (f *figures) account(t *testing.T, s int, cl *call, row ledger.Invocation, effs []effect, q queue) {
	state := row.State
	if cl.state != string(state) {
		t.Logf("%s %s: answered %s, settled %s since", cl.tool, cl.key, cl.state, state)
	}
	switch want := terminalForTool(cl.tool, s); {
	case state == want:
	case state == mt.InvocationNeedsReconciliation:
		f.HeldCalls++
		if _, ok := q.effects[cl.key]; !ok {
			f.Unaccounted++
			t.Errorf("%s %s is held but not listed for reconciliation", cl.tool, cl.key)
		}
		t.Logf("%s %s held for a human, %d effects at the provider", cl.tool, cl.key, len(effs))
	case state == mt.InvocationFailed && len(effs) == 0:
		f.FailedCalls++
		t.Logf("%s %s failed, nothing at the provider: %s", cl.tool, cl.key, observed(row))
	default:
		f.Unaccounted++
		t.Errorf("%s %s ended %s, not %s, with %d effects: %s", cl.tool, cl.key, state, want, len(effs), observed(row))
	}

	switch {
	case state == mt.InvocationSucceeded && hasEffect(cl.tool):
		receipt := receiptOf(cl.tool, row)
		if !slices.ContainsFunc(effs, func(e effect) bool { return e.id == receipt }) {
			f.Lost++
			t.Errorf("%s %s: receipt %q has no effect at the provider", cl.tool, cl.key, receipt)
		}
	case len(effs) == 0:
	case state == mt.InvocationNeedsReconciliation:
		f.HeldWithEffect++
	case state != mt.InvocationSucceeded:
		f.Unaccounted++
		t.Errorf("%s %s ended %s, yet its effect is at the provider", cl.tool, cl.key, state)
	}

	if cl.tool == "send_sms" || len(effs) != 1 {
		return
	}
	cancels := effs[0].cancels
	f.Compensations += cancels
	switch {
	case !rolledBack(s) && cancels != 0:
		t.Errorf("%s %s: cancelled %d times, its session not rolled back", cl.tool, cl.key, cancels)
	case rolledBack(s) && state == mt.InvocationSucceeded && cancels != 1:
		t.Errorf("%s %s: cancelled %d times by its session's rollback", cl.tool, cl.key, cancels)
	case rolledBack(s) && cancels > 1:
		t.Errorf("%s %s: held, and cancelled %d times by its session's rollback", cl.tool, cl.key, cancels)
	}
}

// hasEffect says whether a succeeded call of the tool has an effect at a
// provider.
func hasEffect(tool string) bool {
	return tool == "send_sms" || tool == "create_work_order" || tool == "issue_refund"
}

// receiptOf is the effect's ID at its provider, as the ledger holds it.
func receiptOf(tool string, row ledger.Invocation) string {
	if row.Observation == nil || row.Observation.Receipt == nil {
		return ""
	}
	r := row.Observation.Receipt
	if tool == "send_sms" {
		return r.Fields["message_sid"]
	}
	return r.ID
}

func observed(row ledger.Invocation) string {
	if row.Observation == nil {
		return "no observation"
	}
	return fmt.Sprintf("%s %s", row.Observation.Code, row.Observation.Summary)
}

// approvals proves the approval gate from the ledger's own tables: every
// request decided at most once, a token spent at most once, each as the
// operator decided it, and every refund at the sandbox paid on a spent
// token of an approved request for its call.
func (f *figures) approvals(ctx context.Context, t *testing.T, dsn string, bySession [][]*call, dec decisions, effects map[string][]effect) {
	f.Approved, f.Rejected = distinct(dec.approved), distinct(dec.rejected)
	f.ApprovalRequests = len(dec.approved) + len(dec.rejected)
	if f.ApprovalRequests != f.Approved+f.Rejected {
		t.Logf("approval requests %d for %d refunds: %v", f.ApprovalRequests, f.Approved+f.Rejected, reraised(dec))
	}
	require.Equal(t, f.ByTool["issue_refund"], f.Approved+f.Rejected, "every refund decided")
	f.OtherApprovals = distinct(dec.other)

	records, err := approvalRecords(ctx, dsn)
	require.NoError(t, err)
	byID := map[string]approvalRecord{}
	byKey := map[string][]approvalRecord{}
	for _, r := range records {
		byID[r.id] = r
		byKey[r.key] = append(byKey[r.key], r)
		f.ApprovalDecisions += r.decisions
		f.TokensSpent += r.spent
		if r.decisions > 1 {
			f.DecidedTwice++
			t.Errorf("approval %s for %s %s: decided %d times", r.id, r.tool, r.key, r.decisions)
		}
		require.LessOrEqual(t, r.spent, 1, "approval %s: tokens spent", r.id)
	}
	for _, d := range []struct {
		status  string
		decided map[string]string
	}{{"approved", dec.approved}, {"rejected", dec.rejected}, {"approved", dec.other}} {
		for id := range d.decided {
			require.Equal(t, d.status, byID[id].status, "approval %s as the operator decided it", id)
		}
	}
	for id := range dec.rejected {
		require.Zero(t, byID[id].spent, "rejected approval %s: tokens spent", id)
	}
	for _, calls := range bySession {
		for _, cl := range calls {
			if cl.tool != "issue_refund" {
				continue
			}
			for _, e := range effects[cl.key] {
				f.MoneyEffects++
				if !slices.ContainsFunc(byKey[cl.key], func(r approvalRecord) bool { return r.status == "approved" && r.spent == 1 }) {
					f.MoneyUnmatched++
					t.Errorf("refund %s for %s: no spent token of an approved request", e.id, cl.key)
				}
			}
		}
	}
}

// postCall proves each session's message delivered once or held for a
// human and listed. A delivery whose unknown outcome the tool's on_unknown
// policy settled by sending again may leave one more email, by design (a
// lost message is worse than a duplicate one); those are counted apart,
// and any email beyond them is a duplicate.
func (f *figures) postCall(ctx context.Context, t *testing.T, ops *apiclient.Client, bySession [][]*call, emails []string, sms []effect, q queue) {
	for _, calls := range bySession {
		session := calls[0].session
		n := deliveriesOf("message "+calls[1].key, emails, sms)
		_, held := q.postCall[session]
		switch {
		case n == 0 && held:
			f.HeldPostCall++
			t.Logf("session %s: its message is held for a human", session)
			continue
		case n == 0:
			f.Lost++
			t.Errorf("session %s: its message was neither delivered nor held", session)
			continue
		case held:
			t.Logf("session %s: its message was delivered %d times and is held too", session, n)
		}
		f.PostCall++
		if n == 1 {
			continue
		}
		resent, err := postCallResends(ctx, ops, session)
		require.NoError(t, err)
		f.PostCallResent += min(n-1, resent)
		if n-1 > resent {
			f.Duplicates += n - 1 - resent
			t.Errorf("session %s: its message was delivered %d times, %d of them resent by policy", session, n, resent)
		}
	}
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

// postCallWait bounds the wait for post-call work after the last call. A
// worker killed mid-delivery is noticed by its heartbeat timeout, a minute,
// and the kills can land on one delivery more than once.
const postCallWait = 8 * time.Minute

// reportUndelivered says, for each session whose message is neither
// delivered nor held, what the ledger holds for it.
func reportUndelivered(ctx context.Context, t *testing.T, st ledger.Store, bySession [][]*call, settled func([]*call) bool) {
	t.Errorf("post-call: messages neither delivered nor held after %s", postCallWait)
	for _, calls := range bySession {
		if settled(calls) {
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
		t.Errorf("session %s: its message neither delivered nor held; its other invocations: %v", calls[0].session, rows)
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
			cancels, _ := d["cancel_count"].(float64)
			out = append(out, effect{id: id, marker: marker, status: status, cancels: int(cancels)})
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
