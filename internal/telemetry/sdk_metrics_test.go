package telemetry_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"

	"github.com/maestro-run/maestro/internal/telemetry"
)

// The SDK's handler hands back the same tagged copy and instruments each
// time it is asked, and what they record lands on the series the tags
// name, the parent's tags included, as OpenTelemetry's handler alone
// records it.
func TestSDKMetricsRecordOnTheSeriesTheirTagsName(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t, telemetry.Config{})
	opts, err := tel.ClientOptions(client.Options{})
	require.NoError(t, err)
	base := opts.MetricsHandler.WithTags(map[string]string{"namespace": "default", "task_queue": "maestro"})
	require.Same(t, base, opts.MetricsHandler.WithTags(map[string]string{"task_queue": "maestro", "namespace": "default"}))
	for _, op := range []string{"StartWorkflowExecution", "StartWorkflowExecution", "GetWorkflowExecutionHistory"} {
		h := base.WithTags(map[string]string{"operation": op})
		h.Counter("temporal_request").Inc(1)
		h.Timer("temporal_request_latency").Record(3 * time.Millisecond)
	}
	base.Gauge("temporal_num_pollers").Update(2)
	base.Gauge("temporal_num_pollers").Update(3)

	families, _ := scrape(t, tel)
	requests := map[string]float64{}
	for _, m := range families["temporal_request_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		require.Equal(t, "default", labels["namespace"])
		require.Equal(t, "maestro", labels["task_queue"])
		requests[labels["operation"]] = m.GetCounter().GetValue()
	}
	require.Equal(t, map[string]float64{"StartWorkflowExecution": 2, "GetWorkflowExecutionHistory": 1}, requests)
	latencies := uint64(0)
	for _, m := range families["temporal_request_latency_seconds"].GetMetric() {
		latencies += m.GetHistogram().GetSampleCount()
	}
	require.Equal(t, uint64(3), latencies)
	require.Equal(t, 3.0, families["temporal_num_pollers"].GetMetric()[0].GetGauge().GetValue())
}

// The SDK's contrib packages still find OpenTelemetry's handler beneath.
func TestSDKMetricsUnwrapToOpenTelemetrysHandler(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t, telemetry.Config{})
	opts, err := tel.ClientOptions(client.Options{})
	require.NoError(t, err)
	require.NotNil(t, temporalotel.ExtractMetricsHandler(opts.MetricsHandler))
	require.NotNil(t, temporalotel.ExtractMetricsHandler(opts.MetricsHandler.WithTags(map[string]string{"operation": "x"})))
}

// BenchmarkSDKMetricsRequest is what the SDK does around each request to
// the frontend: a copy tagged with the operation, a counter and a timer.
func BenchmarkSDKMetricsRequest(b *testing.B) {
	tel, err := telemetry.New(b.Context(), telemetry.Config{})
	require.NoError(b, err)
	opts, err := tel.ClientOptions(client.Options{})
	require.NoError(b, err)
	h := opts.MetricsHandler.WithTags(map[string]string{"namespace": "default", "client_name": "temporal-go"})
	b.ReportAllocs()
	for b.Loop() {
		op := h.WithTags(map[string]string{"operation": "StartWorkflowExecution"})
		op.Counter("temporal_request").Inc(1)
		op.Timer("temporal_request_latency").Record(time.Millisecond)
	}
}
