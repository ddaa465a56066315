package telemetry_test

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/internal/telemetry"
	"github.com/maestro-run/maestro/internal/telemetry/telemetrytest"
)

// sdkMetrics are the metrics the Temporal Go SDK records, by the kind it
// records them as (go.temporal.io/sdk/internal/common/metrics, its
// resource tuner, and the _attempt names its gRPC dialer adds). The SDK
// names temporal_workflow_active_thread_count too but never records it.
func sdkMetrics() (counters, gauges, timers []string) {
	counters = []string{
		"temporal_request", "temporal_request_failure", "temporal_request_resource_exhausted",
		"temporal_long_request", "temporal_long_request_failure", "temporal_long_request_resource_exhausted",
		"temporal_request_attempt", "temporal_request_failure_attempt",
		"temporal_long_request_attempt", "temporal_long_request_failure_attempt",
		"temporal_workflow_completed", "temporal_workflow_canceled", "temporal_workflow_failed", "temporal_workflow_continue_as_new",
		"temporal_workflow_task_queue_poll_empty", "temporal_workflow_task_queue_poll_succeed",
		"temporal_workflow_task_execution_failed", "temporal_workflow_task_no_completion",
		"temporal_activity_poll_no_task", "temporal_activity_execution_failed", "temporal_activity_task_error",
		"temporal_unregistered_activity_invocation",
		"temporal_local_activity_total", "temporal_local_activity_canceled", "temporal_local_activity_execution_cancelled",
		"temporal_local_activity_failed", "temporal_local_activity_execution_failed", "temporal_local_activity_error",
		"temporal_corrupted_signals", "temporal_worker_start", "temporal_poller_start",
		"temporal_sticky_cache_hit", "temporal_sticky_cache_miss", "temporal_sticky_cache_total_forced_eviction",
		"temporal_nexus_poll_no_task", "temporal_nexus_task_execution_failed",
	}
	gauges = []string{
		"temporal_num_pollers", "temporal_worker_task_slots_available", "temporal_worker_task_slots_used",
		"temporal_sticky_cache_size",
		"temporal_resource_slots_cpu_usage", "temporal_resource_slots_mem_usage",
	}
	timers = []string{
		"temporal_request_latency", "temporal_long_request_latency",
		"temporal_request_latency_attempt", "temporal_long_request_latency_attempt",
		"temporal_workflow_endtoend_latency", "temporal_workflow_task_replay_latency",
		"temporal_workflow_task_schedule_to_start_latency", "temporal_workflow_task_execution_latency",
		"temporal_activity_schedule_to_start_latency", "temporal_activity_execution_latency",
		"temporal_activity_succeed_endtoend_latency",
		"temporal_local_activity_execution_latency", "temporal_local_activity_succeed_endtoend_latency",
		"temporal_nexus_task_schedule_to_start_latency", "temporal_nexus_task_execution_latency",
		"temporal_nexus_task_endtoend_latency",
	}
	return counters, gauges, timers
}

// scrape reads the handler's /metrics as Prometheus does.
func scrape(t *testing.T, tel *telemetry.Telemetry) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	srv := httptest.NewServer(tel.Handler(http.NotFoundHandler()))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err)
	return families, string(body)
}

// recordEverySDKMetric records each of the SDK's metrics once through the
// handler maestro gives its Temporal clients, every latency 64 ms.
func recordEverySDKMetric(t *testing.T, tel *telemetry.Telemetry) {
	t.Helper()
	opts, err := tel.ClientOptions(client.Options{})
	require.NoError(t, err)
	h := opts.MetricsHandler.WithTags(map[string]string{"namespace": "default", "task_queue": "maestro"})
	counters, gauges, timers := sdkMetrics()
	for _, name := range counters {
		h.Counter(name).Inc(1)
	}
	for _, name := range gauges {
		h.Gauge(name).Update(2)
	}
	for _, name := range timers {
		h.Timer(name).Record(64 * time.Millisecond)
	}
}

// Temporal's SDK records its latencies in seconds: its histograms have
// buckets in seconds, so a 64 ms call lands between 50 ms and 100 ms, and
// every series has help text.
func TestTemporalHistogramsAreInSecondsWithHelp(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t, telemetry.Config{})
	recordEverySDKMetric(t, tel)
	_, done := tel.ProviderCall(t.Context(), "http", "read")
	done(nil)
	families, _ := scrape(t, tel)

	want := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15, 30, 60, 120}
	_, _, timers := sdkMetrics()
	histograms := []string{"maestro_provider_call_duration_seconds"}
	for _, name := range timers {
		histograms = append(histograms, name+"_seconds")
	}
	for _, name := range histograms {
		f := families[name]
		require.NotNil(t, f, name)
		require.Equal(t, dto.MetricType_HISTOGRAM, f.GetType(), name)
		h := f.GetMetric()[0].GetHistogram()
		var bounds []float64
		below := map[float64]uint64{}
		for _, b := range h.GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				bounds = append(bounds, b.GetUpperBound())
				below[b.GetUpperBound()] = b.GetCumulativeCount()
			}
		}
		require.Equal(t, want, bounds, name)
		if strings.HasPrefix(name, "temporal_") {
			require.Zero(t, below[.05], "%s: 64 ms is above 50 ms", name)
			require.Equal(t, uint64(1), below[.1], "%s: 64 ms is below 100 ms", name)
		}
	}
	for name, f := range families {
		require.NotEmpty(t, f.GetHelp(), "%s has no help text", name)
		if strings.HasPrefix(name, "temporal_") {
			require.NotContains(t, f.GetHelp(), "docs.temporal.io", "%s is described in maestro's own words", name)
		}
	}
}

// A metric a newer SDK adds still has help text.
func TestAnUnknownTemporalMetricStillHasHelp(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t, telemetry.Config{})
	opts, err := tel.ClientOptions(client.Options{})
	require.NoError(t, err)
	opts.MetricsHandler.Counter("temporal_something_new").Inc(1)
	families, _ := scrape(t, tel)
	require.Contains(t, families["temporal_something_new_total"].GetHelp(), "docs.temporal.io/references/sdk-metrics")
}

// promtool check metrics runs promlint: /metrics passes it with every
// Temporal SDK metric recorded.
func TestMetricsPassPromtoolsLint(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t, telemetry.Config{})
	recordEverySDKMetric(t, tel)
	_, done := tel.ProviderCall(t.Context(), "twilio_sms", "write")
	done(nil)
	_, body := scrape(t, tel)
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	require.NoError(t, err)
	require.Empty(t, problems)
}

// The README's metrics table lists every Temporal SDK series as
// Prometheus shows it, and no other.
func TestREADMEListsEveryTemporalSeries(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t, telemetry.Config{})
	recordEverySDKMetric(t, tel)
	families, _ := scrape(t, tel)
	documented, err := telemetrytest.DocumentedMetrics("../../README.md")
	require.NoError(t, err)

	var served, listed []string
	for name := range families {
		if strings.HasPrefix(name, "temporal_") {
			served = append(served, name)
		}
	}
	for name := range documented {
		if strings.HasPrefix(name, "temporal_") {
			listed = append(listed, name)
		}
	}
	sort.Strings(served)
	sort.Strings(listed)
	require.Equal(t, served, listed)
}
