package grader

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPercentileIsNearestRank(t *testing.T) {
	t.Parallel()
	values := []float64{40, 10, 30, 20, 100, 50, 60, 70, 80, 90}
	require.InDelta(t, 50, percentile(values, 0.50), 1e-9)
	require.InDelta(t, 100, percentile(values, 0.95), 1e-9)
	require.InDelta(t, 7, percentile([]float64{7}, 0.95), 1e-9)
	require.Zero(t, percentile(nil, 0.5))

	l := latencyOf([]RunResult{{LatencyMS: 3}, {LatencyMS: 1}, {LatencyMS: 2}})
	require.Equal(t, Latency{P50MS: 2, P95MS: 3}, l)
}
