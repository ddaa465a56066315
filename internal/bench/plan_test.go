package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPlanGivesEachCallerItsOwnSessions(t *testing.T) {
	t.Parallel()
	calls := plan("p", 7, 2, 2)
	require.Len(t, calls, 7)
	keys := map[string]bool{}
	perSession := map[string]int{}
	for i, c := range calls {
		require.Equal(t, i%2, c.caller)
		keys[c.key] = true
		perSession[c.session]++
	}
	require.Len(t, keys, 7, "operation keys are unique")
	// Caller 0 makes calls 0, 2, 4, 6: two sessions of two calls. Caller 1
	// joins its first session one call in, after its opener.
	require.Equal(t, map[string]int{"p-w0-s0": 2, "p-w0-s1": 2, "p-w1-s0": 1, "p-w1-s1": 2}, perSession)
	open := openers("p", 2, 2)
	require.Len(t, open, 1)
	require.Equal(t, "p-w1-s0", open[0].session)
	require.NotContains(t, keys, open[0].key)
}

func TestPlanOpensOneSessionInPerSessionCalls(t *testing.T) {
	t.Parallel()
	// Three calls per caller, five per session: without the stagger every
	// caller's first call would open a session, one in three.
	calls := plan("p", 192, 64, 5)
	opened := map[string]bool{}
	for _, o := range openers("p", 64, 5) {
		opened[o.session] = true
	}
	opens := 0
	for _, c := range calls {
		if !opened[c.session] {
			opened[c.session] = true
			opens++
		}
	}
	require.InDelta(t, 192/5, opens, 2)
}

func TestPercentileIsNearestRank(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 1; i <= 40; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	require.Equal(t, 20*time.Millisecond, percentile(d, 50))
	require.Equal(t, 38*time.Millisecond, percentile(d, 95))
	require.Equal(t, 40*time.Millisecond, percentile(d, 99), "with fewer than 100 samples p99 is the maximum")
	require.Equal(t, 7*time.Millisecond, percentile([]time.Duration{7 * time.Millisecond}, 50))
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	cfg, err := ParseFlags("bench", []string{"-concurrency", "1,8", "-calls", "10, 80", "-only", "maestro,temporal/read"})
	require.NoError(t, err)
	require.Equal(t, []int{1, 8}, cfg.Concurrency)
	require.Equal(t, []int{10, 80}, cfg.Calls)
	require.Equal(t, []string{"maestro", "temporal/read"}, cfg.Only)
	require.NoError(t, cfg.WithDefaults().validate())

	_, err = ParseFlags("bench", []string{"-calls", "ten"})
	require.Error(t, err)
	cfg, err = ParseFlags("bench", []string{"-concurrency", "1,16,64", "-calls", "40"})
	require.NoError(t, err)
	require.ErrorContains(t, cfg.WithDefaults().validate(), "one call count per concurrency")

	cfg, err = ParseFlags("bench", nil)
	require.NoError(t, err)
	require.False(t, cfg.SkipLedgerCount, "a PostgreSQL ledger's round trips are counted unless asked not to")
	require.Equal(t, 4, cfg.TemporalShards)
	require.False(t, cfg.CPUProfile)
	require.False(t, cfg.MemProfile)

	cfg, err = ParseFlags("bench", []string{"-database-url", "postgres://u@h/db", "-count-ledger=false",
		"-temporal-database-url", "postgres://u@h/t", "-temporal-shards", "8", "-cpuprofile", "-memprofile"})
	require.NoError(t, err)
	require.Equal(t, "postgres://u@h/db", cfg.DatabaseURL)
	require.True(t, cfg.SkipLedgerCount)
	require.Equal(t, "postgres://u@h/t", cfg.TemporalDatabaseURL)
	require.Equal(t, 8, cfg.TemporalShards)
	require.True(t, cfg.CPUProfile)
	require.True(t, cfg.MemProfile)

	cfg, err = ParseFlags("bench", []string{"-temporal-shards", "-1"})
	require.NoError(t, err)
	require.ErrorContains(t, cfg.validate(), "temporal shards")
}

func TestMatchedBaselineUsesMaestrosTemporalFeatures(t *testing.T) {
	t.Parallel()
	require.Equal(t, pathEagerLocal, matchedBaseline("read"), "reads start eagerly and run as a local activity")
	require.Equal(t, pathEager, matchedBaseline("real-sync"), "writes start eagerly and run as regular activities")
	require.Equal(t, pathEager, matchedBaseline("compensable"))
	require.Equal(t, pathSignal, matchedBaseline("approval"), "an approval wakes the workflow with a signal")
	v := variantFor(pathEagerLocal)
	require.True(t, v.eager)
	require.Equal(t, bareLocalWorkflowName, v.workflow)
}
