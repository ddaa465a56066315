package bench

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cellResult builds a measured cell with the numbers the goals read.
func cellResult(path, op string, conc int, p50, p99 time.Duration, throughput, events, sessionEvents float64) result {
	return result{
		path: path, op: op, scenario: path + "/" + op, concurrency: conc, calls: 10,
		stats:  stats{p50: p50, p99: p99, throughput: throughput},
		events: events, sessionEvents: sessionEvents,
	}
}

func findGoal(t *testing.T, gs []goal, name, op string, conc int) goal {
	t.Helper()
	for _, g := range gs {
		if g.name == name && g.op == op && g.concurrency == conc {
			return g
		}
	}
	t.Fatalf("no goal %q for %s at %d", name, op, conc)
	return goal{}
}

func TestLatencyGoalPassesAtTheBoundaryAndFailsPastIt(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	gs := evaluateGoals([]result{
		cellResult(pathEagerLocal, "read", 16, 100*ms, 200*ms, 50, 6, -1),
		cellResult(pathMaestro, "read", 16, 110*ms, 221*ms, 50, 6, 2),
		// The plain floor is reference only: a fast one must not be the yardstick.
		cellResult(pathTemporal, "read", 16, 10*ms, 20*ms, 50, 11, -1),
	}, nil)
	p50 := findGoal(t, gs, "1 latency p50", "read", 16)
	require.Equal(t, goalPass, p50.status, "exactly 1.10× the matched baseline meets the goal")
	require.Equal(t, pathEagerLocal, p50.baselinePath)
	p99 := findGoal(t, gs, "1 latency p99", "read", 16)
	require.Equal(t, goalFail, p99.status, "1.105× misses it")
}

func TestThroughputGoalIsAFloor(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	gs := evaluateGoals([]result{
		cellResult(pathEager, "real-sync", 64, ms, ms, 100, 11, -1),
		cellResult(pathMaestro, "real-sync", 64, ms, ms, 90, 13, 1),
		cellResult(pathEager, "compensable", 64, ms, ms, 100, 11, -1),
		cellResult(pathMaestro, "compensable", 64, ms, ms, 89.9, 13, 1),
	}, nil)
	require.Equal(t, goalPass, findGoal(t, gs, "2 throughput", "real-sync", 64).status, "0.90× the baseline is enough")
	require.Equal(t, goalFail, findGoal(t, gs, "2 throughput", "compensable", 64).status)
}

func TestEventsGoalCountsTheSessionsShare(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	gs := evaluateGoals([]result{
		cellResult(pathEagerLocal, "read", 1, ms, ms, 1, 6, -1),
		cellResult(pathMaestro, "read", 1, ms, ms, 1, 6, 2),
		cellResult(pathEager, "real-sync", 1, ms, ms, 1, 11, -1),
		cellResult(pathMaestro, "real-sync", 1, ms, ms, 1, 11, 2.5),
	}, nil)
	read := findGoal(t, gs, "3 history events", "read", 1)
	require.Equal(t, goalPass, read.status, "baseline + 2 is allowed")
	require.InDelta(t, 8, read.measured, 1e-9)
	require.InDelta(t, 8, read.target, 1e-9)
	require.Equal(t, goalFail, findGoal(t, gs, "3 history events", "real-sync", 1).status, "the session's events count against maestro")
}

func TestApprovalAndAbsoluteGoals(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	gs := evaluateGoals([]result{
		cellResult(pathSignal, "approval", 1, 100*ms, 100*ms, 1, 17, -1),
		cellResult(pathMaestro, "approval", 1, 110*ms, 300*ms, 1, 19, 3),
		cellResult(pathMaestro, "read", absoluteConcurrency, ms, 100*ms, 1, 8, 2),
		cellResult(pathMaestro, "real-sync", absoluteConcurrency, ms, 151*ms, 1, 13, 2),
	}, nil)
	require.Equal(t, goalPass, findGoal(t, gs, "4 approval p50", "approval", 1).status)
	require.Equal(t, goalPass, findGoal(t, gs, "5 absolute p99", "read", absoluteConcurrency).status, "100 ms is within the ceiling")
	require.Equal(t, goalFail, findGoal(t, gs, "5 absolute p99", "real-sync", absoluteConcurrency).status)
}

func TestGoalWithoutABaselineIsNotMeasuredNotPassed(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	gs := evaluateGoals([]result{
		// Only the plain floor ran, not the matched baseline.
		cellResult(pathTemporal, "read", 1, 100*ms, 100*ms, 10, 11, -1),
		cellResult(pathMaestro, "read", 1, ms, ms, 1000, 8, 2),
		// The baseline ran, but every maestro call failed.
		cellResult(pathEager, "real-sync", 1, 100*ms, 100*ms, 10, 11, -1),
		{path: pathMaestro, op: "real-sync", scenario: "maestro/real-sync", concurrency: 1, calls: 4, failed: 4, sessionEvents: -1},
	}, nil)
	for _, g := range []goal{
		findGoal(t, gs, "1 latency p50", "read", 1),
		findGoal(t, gs, "1 latency p50", "real-sync", 1),
		findGoal(t, gs, "1 latency p50", "read", 64),
		findGoal(t, gs, "2 throughput", "read", 64),
		findGoal(t, gs, "3 history events", "read", 0),
		findGoal(t, gs, "5 absolute p99", "read", absoluteConcurrency),
	} {
		require.Equal(t, goalUnmeasured, g.status, "%s %s at %d", g.name, g.op, g.concurrency)
	}
	passed, failed, unmeasured := goalCounts(gs)
	require.Zero(t, passed)
	require.Zero(t, failed)
	require.Equal(t, len(gs), unmeasured)
}

func TestGoalTableNamesTheMissedGoals(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	rep := newReport([]result{
		cellResult(pathEagerLocal, "read", 1, 10*ms, 10*ms, 100, 6, -1),
		cellResult(pathMaestro, "read", 1, 20*ms, 10*ms, 50, 6, 1),
	}, false, nil)
	var out, md, csv bytes.Buffer
	require.NoError(t, rep.writeGoalTable(&out))
	require.NoError(t, rep.writeGoalsMarkdown(&md))
	require.NoError(t, rep.writeGoalsCSV(&csv))
	require.Contains(t, out.String(), "FAIL")
	require.Contains(t, out.String(), "PASS")
	require.Contains(t, out.String(), "not measured")
	require.Contains(t, out.String(), "Missed: 0 bar p50 read at 1; 1 latency p50 read at 1.")
	require.Contains(t, md.String(), "| 1 latency p50 | read | 1 | 2.00× | ≤ 1.10× | ❌ FAIL |")
	require.Contains(t, csv.String(), "1 latency p50,read,1,ms,20.000,temporal+eager+local,10.000,2.000,ratio,<=,1.100,FAIL")
}

// withLedger adds the ledger work per call a cell counted.
func withLedger(r result, roundTrips, transactions float64) result {
	r.ledger = ledgerPerCall{counted: true, roundTrips: roundTrips, statements: roundTrips, transactions: transactions}
	return r
}

func TestLedgerGoalsJudgeEachRouteAtItsLowestConcurrency(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	gs := evaluateGoals([]result{
		withLedger(cellResult(pathMaestro, "read", 1, ms, ms, 1, 8, 2), 2, 2),
		withLedger(cellResult(pathMaestro, "real-sync", 1, ms, ms, 1, 13, 2), 47, 18),
		// Calls that overlap count one another's background work: the
		// lowest concurrency is the one judged.
		withLedger(cellResult(pathMaestro, "compensable", 16, ms, ms, 1, 13, 2), 9, 4),
		withLedger(cellResult(pathMaestro, "compensable", 1, ms, ms, 1, 13, 2), 8, 3),
		withLedger(cellResult(pathMaestro, "approval", 1, ms, ms, 1, 19, 3), 35, 18),
	}, nil)
	for _, c := range []struct {
		name, op string
		want     goalStatus
		measured float64
	}{
		{"6 ledger round trips", "read", goalPass, 2},
		{"6 ledger transactions", "read", goalPass, 2},
		{"6 ledger round trips", "real-sync", goalFail, 47},
		{"6 ledger transactions", "real-sync", goalFail, 18},
		{"6 ledger round trips", "compensable", goalPass, 8},
		{"6 ledger transactions", "compensable", goalPass, 3},
		{"6 ledger transactions", "approval", goalFail, 18},
	} {
		g := findGoal(t, gs, c.name, c.op, 1)
		require.Equal(t, c.want, g.status, "%s %s", c.name, c.op)
		require.InDelta(t, c.measured, g.measured, 1e-9, "%s %s", c.name, c.op)
	}
	require.Equal(t, "≤ 4 transactions", findGoal(t, gs, "6 ledger transactions", "approval", 1).formatTarget())
	require.Equal(t, "47 round trips", findGoal(t, gs, "6 ledger round trips", "real-sync", 1).formatMeasured())
	for _, g := range gs {
		require.False(t, g.name == "6 ledger round trips" && g.op == "approval", "an approval's round trips have no target")
	}
}

func TestLedgerGoalsJudgeTheRoutesOwnWorkWhenCounted(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	// The cell counts the sessions it opened and the delivery reports
	// beside the calls; the ledger pass counts the call alone.
	gs := evaluateGoals([]result{
		withLedger(cellResult(pathMaestro, "real-sync", 1, ms, ms, 1, 13, 2), 17, 5.5),
		withLedger(cellResult(pathMaestro, "compensable", 1, ms, ms, 1, 13, 2), 4.5, 3.6),
	}, map[string]ledgerPerCall{
		"real-sync": {counted: true, roundTrips: 5, transactions: 3},
	})
	sync := findGoal(t, gs, "6 ledger transactions", "real-sync", 1)
	require.Equal(t, goalPass, sync.status)
	require.InDelta(t, 3, sync.measured, 1e-9)
	comp := findGoal(t, gs, "6 ledger transactions", "compensable", 1)
	require.Equal(t, goalFail, comp.status, "a route the pass did not count is judged on its cell")
	require.InDelta(t, 3.6, comp.measured, 1e-9)
}

func TestLedgerGoalsAreNotMeasuredWhenTheLedgerWasNotCounted(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	rep := newReport([]result{
		// A SQLite ledger, or -count-ledger=false: maestro ran, uncounted.
		cellResult(pathMaestro, "read", 1, ms, ms, 1, 8, 2),
	}, false, nil)
	read := findGoal(t, rep.goals, "6 ledger round trips", "read", 0)
	require.Equal(t, goalUnmeasured, read.status)
	require.Contains(t, read.formatCompared(), "ledger not counted")
	sync := findGoal(t, rep.goals, "6 ledger transactions", "real-sync", 0)
	require.Equal(t, goalUnmeasured, sync.status)
	require.Equal(t, "maestro did not run here", sync.formatCompared())

	var out, csv bytes.Buffer
	require.NoError(t, rep.writeGoalTable(&out))
	require.NoError(t, rep.writeGoalsCSV(&csv))
	require.Regexp(t, `6 ledger round trips\s+read\s+-\s+-\s+≤ 2 round trips\s+not measured\s+ledger not counted`, out.String())
	require.Contains(t, csv.String(), "6 ledger transactions,read,,transactions,,,,,transactions,<=,2.000,not measured")
}

func TestBarIsLooserThanTheTargetAndCoversEveryRoute(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	gs := evaluateGoals([]result{
		cellResult(pathEager, "compensable", 64, 100*ms, 100*ms, 100, 11, -1),
		cellResult(pathMaestro, "compensable", 64, 125*ms, 151*ms, 85, 13, 1),
		cellResult(pathSignal, "approval", 1, 10*ms, 10*ms, 10, 17, -1),
		cellResult(pathMaestro, "approval", 1, 13*ms, 15*ms, 10, 17, 1),
	}, nil)
	require.Equal(t, goalPass, findGoal(t, gs, "0 bar p50", "compensable", 64).status, "exactly 1.25× clears the bar")
	require.Equal(t, goalFail, findGoal(t, gs, "0 bar p99", "compensable", 64).status, "1.51× does not")
	require.Equal(t, goalPass, findGoal(t, gs, "0 bar throughput", "compensable", 64).status, "0.85× of the baseline is enough")
	require.Equal(t, goalFail, findGoal(t, gs, "0 bar p50", "approval", 1).status, "1.30× misses the bar")
	require.Equal(t, goalPass, findGoal(t, gs, "0 bar p99", "approval", 1).status)
	require.Equal(t, goalUnmeasured, findGoal(t, gs, "0 bar p50", "read", 16).status, "a route that did not run is not measured")
}
