package telemetry

import (
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// durationBuckets are the bucket boundaries, in seconds, of every
// duration histogram a process exports: from a millisecond, a read
// answered from the ledger, to two minutes, the longest a voice platform
// waits for an answer.
func durationBuckets() []float64 {
	return []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15, 30, 60, 120}
}

// view shapes every OpenTelemetry instrument before Prometheus exports
// it. OpenTelemetry's default histogram buckets (0, 5, 10 … 10000) suit
// milliseconds, but Temporal's SDK records its latencies in seconds, so a
// quantile read from them is meaningless; and the SDK describes none of
// its instruments, which leaves their series without help text.
func view(i sdkmetric.Instrument) (sdkmetric.Stream, bool) {
	s := sdkmetric.Stream{Name: i.Name, Description: i.Description, Unit: i.Unit}
	if s.Description == "" {
		s.Description = temporalHelp(i.Name)
	}
	if i.Kind == sdkmetric.InstrumentKindHistogram && i.Unit == "s" {
		s.Aggregation = sdkmetric.AggregationExplicitBucketHistogram{Boundaries: durationBuckets()}
	}
	return s, true
}
