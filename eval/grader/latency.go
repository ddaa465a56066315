package grader

import (
	"math"
	"slices"
	"time"
)

// Latency summarises how long runs took, from admission to the final
// observation the ledger holds, in milliseconds. A fast wrong answer and a
// slow right one are both worth knowing about, so it is reported beside
// the pass rate.
type Latency struct {
	P50MS float64 `json:"p50_ms"`
	P95MS float64 `json:"p95_ms"`
}

func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// latencyOf takes the nearest-rank percentiles of the runs' latencies.
func latencyOf(runs []RunResult) Latency {
	ms := make([]float64, 0, len(runs))
	for _, r := range runs {
		ms = append(ms, r.LatencyMS)
	}
	return Latency{P50MS: percentile(ms, 0.50), P95MS: percentile(ms, 0.95)}
}

// percentile is the nearest-rank percentile p of values; 0 when empty.
func percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(values))
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(rank, 0)]
}

// PathLatency is the latency of one path over every target's runs.
type PathLatency struct {
	Path Path `json:"path"`
	Latency
}

// latencyByPath pools every run of each path, in the order of Paths.
func latencyByPath(paths []PathResult) []PathLatency {
	var out []PathLatency
	for _, p := range Paths {
		var runs []RunResult
		for _, pr := range paths {
			if pr.Path == p {
				runs = append(runs, pr.Results...)
			}
		}
		if len(runs) > 0 {
			out = append(out, PathLatency{Path: p, Latency: latencyOf(runs)})
		}
	}
	return out
}
