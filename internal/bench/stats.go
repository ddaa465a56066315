package bench

import (
	"math"
	"slices"
	"time"
)

// stats summarises a cell's successful calls.
type stats struct {
	p50, p95, p99, slowest, mean time.Duration
	// throughput is calls completed per second of the measured phase.
	throughput float64
}

func summarize(samples []sample, elapsed time.Duration) stats {
	if len(samples) == 0 {
		return stats{}
	}
	lat := make([]time.Duration, len(samples))
	var sum time.Duration
	for i, s := range samples {
		lat[i] = s.latency
		sum += s.latency
	}
	slices.Sort(lat)
	return stats{
		p50:        percentile(lat, 50),
		p95:        percentile(lat, 95),
		p99:        percentile(lat, 99),
		slowest:    lat[len(lat)-1],
		mean:       sum / time.Duration(len(lat)),
		throughput: float64(len(samples)) / elapsed.Seconds(),
	}
}

// percentile is the nearest-rank percentile of sorted: the smallest value
// with at least p% of the samples at or below it. With fewer than 100
// samples the p99 is the maximum.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// split is where the time of calls run by workflows went, as medians.
type split struct {
	// run is inside the workflow: from its start (for a gated call, from
	// the approval signal) to its last event.
	run time.Duration
	// activity is inside activities, from started to completed; zero for a
	// local activity, whose run is not recorded.
	activity time.Duration
	// outside is the call's latency less its workflow's run: for maestro,
	// admission before the start and the wait and answer after it.
	outside time.Duration
}

func splitTime(samples []sample, runs []history) split {
	run := make([]time.Duration, len(runs))
	act := make([]time.Duration, len(runs))
	outside := make([]time.Duration, len(runs))
	for i, h := range runs {
		run[i], act[i], outside[i] = h.run, h.activity, samples[i].latency-h.run
	}
	return split{run: median(run), activity: median(act), outside: median(outside)}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return percentile(d, 50)
}

// ms expresses d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
