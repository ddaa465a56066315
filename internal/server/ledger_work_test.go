package server_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/outbox"
	"github.com/maestro-run/maestro/internal/pgwire"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// ledgerRoute is one route's ledger work per call: the ceiling the test
// holds it to, and the target the ledger is being brought down to.
type ledgerRoute struct {
	name, tool, args string
	// approved calls are human-approved: their work is counted from the
	// operator's decision.
	approved bool
	// roundTrips and transactions are the ceilings: what a call costs
	// today, so that a change that adds ledger work fails here.
	roundTrips, transactions int64
	// targetRoundTrips and targetTransactions are where the ledger is
	// headed (0: no target). Lower the ceilings toward them as the work
	// shrinks; never raise them without saying why.
	targetRoundTrips, targetTransactions int64
}

// ledgerBudget is the ledger work each route may cost per call, on a
// PostgreSQL ledger through database/sql, where BEGIN and COMMIT are a
// round trip each. Round trips leave out those that only prepare a
// statement on a connection.
func ledgerBudget() []ledgerRoute {
	return []ledgerRoute{
		// Target: admission and the answer.
		{name: "read", tool: "lookup_tenant", args: `{"tenant_id":"t_100"}`,
			roundTrips: 2, transactions: 2, targetRoundTrips: 2, targetTransactions: 2},
		// Target: admission; claim, token and undo entry in one; settle,
		// receipt and outcome in one.
		{name: "real-sync", tool: "send_sms", args: smsArgs,
			roundTrips: 5, transactions: 3, targetRoundTrips: 8, targetTransactions: 3},
		// Target: as real-sync, the undo entry pushed with the claim and
		// the catalog's read-back of the work order recorded with the
		// settle.
		{name: "compensable", tool: "create_work_order", args: workOrderArgs,
			roundTrips: 3, transactions: 3, targetRoundTrips: 8, targetTransactions: 3},
		// From the operator's decision to the agent reading the receipt:
		// the decision (its check, token, wake-up delivered and recorded,
		// and the approver's answer read back); the claim with the token
		// spent; settle with the outcome; the agent's read.
		{name: "approval", tool: "issue_refund", args: refundArgs, approved: true,
			roundTrips: 17, transactions: 4, targetTransactions: 4},
	}
}

// ledgerCallsPerRoute is how many calls of each route are counted, one
// after another in the test's session. Their median is held to the budget:
// work that grows with the session's earlier calls raises it, while one
// call slowed past the answer board's wait on a loaded machine (and so
// answered by a read after the workflow closed) does not.
const ledgerCallsPerRoute = 3

// withCountedLedger counts the ledger's work on the wire and quiets every
// loop that would touch the ledger on its own clock during a call: the
// outbox relay still runs when a queued signal nudges it, which is a
// call's own work, but not on its timer; the invocation sweep, the
// callback relay and the catalog poll wait an hour; the Twilio stand-in
// sends no status callbacks, whose recording is the provider's work, not
// the call's.
func withCountedLedger(o *options) {
	o.countLedger = true
	o.noStatusCallbacks = true
	o.outboxInterval = time.Hour
	o.sweepEvery = time.Hour
	o.callbacks.Interval = time.Hour
	o.catalogPoll = time.Hour
}

// TestLedgerWorkPerCall holds each route's ledger work per call to its
// budget, so that round trips and transactions taken out of a route do not
// creep back. A call's work is read off the wire between maestro and
// PostgreSQL, from the request (for an approved call, the decision) until
// the agent has its answer, the call's workflow has closed and the outbox
// holds nothing due: everything the call caused, and, with the loops
// above quieted, nothing else.
func TestLedgerWorkPerCall(t *testing.T) {
	t.Parallel()
	e := setup(t, withCountedLedger)
	for _, r := range ledgerBudget() {
		// One call first: it opens the session and fills the pool's
		// connections and their statement caches.
		e.ledgerCall(r, r.name+"-warm")
		var roundTrips, transactions []int64
		for i := range ledgerCallsPerRoute {
			c := e.ledgerCall(r, fmt.Sprintf("%s-%d", r.name, i))
			t.Logf("%-12s call %d: %d round trips (%d more preparing statements), %d statements, %d transactions, %d new connections",
				r.name, i+1, c.RoundTrips-c.Prepares, c.Prepares, c.Statements, c.Transactions, c.Connections)
			// A statement's first use on one of the pool's connections
			// costs a round trip to prepare it, once per connection; which
			// connection serves it is chance, so those are left out.
			roundTrips = append(roundTrips, c.RoundTrips-c.Prepares)
			transactions = append(transactions, c.Transactions)
		}
		mid := pgwire.Counts{RoundTrips: median(roundTrips), Transactions: median(transactions)}
		t.Logf("%-12s %d round trips (ceiling %d, target %s), %d transactions (ceiling %d, target %s)",
			r.name, mid.RoundTrips, r.roundTrips, target(r.targetRoundTrips),
			mid.Transactions, r.transactions, target(r.targetTransactions))
		require.LessOrEqual(t, mid.RoundTrips, r.roundTrips, "%s: ledger round trips per call", r.name)
		require.LessOrEqual(t, mid.Transactions, r.transactions, "%s: ledger transactions per call", r.name)
	}
}

func median(xs []int64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func target(n int64) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprintf("≤ %d", n)
}

// ledgerCall makes one call of the route and returns the ledger work it
// caused.
func (e *env) ledgerCall(r ledgerRoute, name string) pgwire.Counts {
	e.t.Helper()
	key := e.key(name)
	if r.approved {
		pending, err := e.invoke(r.tool, key, r.args)
		require.NoError(e.t, err)
		require.True(e.t, pending.Pending, "%s is held for approval", r.tool)
		before := e.ledgerWire.Counts()
		_, err = e.ops.Approve(e.ctx, pending.ApprovalID, "counted")
		require.NoError(e.t, err)
		e.awaitLedgerQuiet(key, pending.InvocationID)
		return e.ledgerWire.Counts().Minus(before)
	}
	before := e.ledgerWire.Counts()
	resp, err := e.invoke(r.tool, key, r.args)
	require.NoError(e.t, err)
	require.False(e.t, resp.Pending, "%s answers at once", r.tool)
	require.Equal(e.t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	e.awaitLedgerQuiet(key, "")
	return e.ledgerWire.Counts().Minus(before)
}

// awaitLedgerQuiet waits until the call's workflow has closed and the
// outbox holds no signal due; with invocationID, the agent then reads the
// answer, as a gated call's agent does once it is woken.
func (e *env) awaitLedgerQuiet(key, invocationID string) {
	e.t.Helper()
	require.NoError(e.t, e.temporal.GetWorkflow(e.ctx, workflows.InvocationWorkflowID(key), "").Get(e.ctx, nil))
	require.NoError(e.t, outbox.AwaitDrained(e.ctx, e.uncounted, 10*time.Second), "the outbox delivers what the call queued")
	if invocationID != "" {
		resp, err := e.agent.Invocation(e.ctx, invocationID)
		require.NoError(e.t, err)
		require.Equal(e.t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	}
}
