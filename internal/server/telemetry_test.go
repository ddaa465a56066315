package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"
	temporallog "go.temporal.io/sdk/log"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/telemetry"
	"github.com/maestro-run/maestro/internal/telemetry/telemetrytest"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// withTelemetry runs the test's maestro with tel and a Temporal client
// made with its options.
func withTelemetry(tel *telemetry.Telemetry) func(*options) {
	return func(o *options) { o.telemetry = tel }
}

// telemetryClient dials the test server with tel's metrics and tracing.
func telemetryClient(t *testing.T, tel *telemetry.Telemetry) client.Client {
	t.Helper()
	opts, err := tel.ClientOptions(testCodec.Apply(temporalOptions(client.Options{
		Logger: temporallog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})))
	require.NoError(t, err)
	c, err := client.DialContext(t.Context(), opts)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func newTelemetry(t *testing.T, cfg telemetry.Config) *telemetry.Telemetry {
	t.Helper()
	tel, err := telemetry.New(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return tel
}

// scrape reads /metrics without a key, as Prometheus does.
func (e *env) scrape() (map[string]*dto.MetricFamily, string) {
	e.t.Helper()
	return scrapeURL(e.t, e.url)
}

func scrapeURL(t *testing.T, base string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
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

// temporalFamilies names the Temporal SDK's metric families.
func temporalFamilies(families map[string]*dto.MetricFamily) []string {
	var out []string
	for name := range families {
		if strings.HasPrefix(name, "temporal_") {
			out = append(out, name)
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// value is a gauge's or counter's value.
func value(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// byLabels maps each series of a family to its value, keyed by its label
// values joined with "/".
func byLabels(f *dto.MetricFamily, names ...string) map[string]float64 {
	out := map[string]float64{}
	if f == nil {
		return out
	}
	for _, m := range f.GetMetric() {
		var parts []string
		for _, n := range names {
			parts = append(parts, label(m, n))
		}
		out[strings.Join(parts, "/")] += value(m)
	}
	return out
}

func TestMetricsAgreeWithTheLedger(t *testing.T) {
	t.Parallel()
	e := setup(t, withTelemetry(newTelemetry(t, telemetry.Config{})))

	// A scripted mix: reads and a text that succeed, two refusals, a
	// refund left awaiting approval, and, in a second session, a work
	// order rolled back.
	for i := range 2 {
		resp, err := e.invoke("lookup_tenant", e.key(fmt.Sprintf("lookup-%d", i)), `{"tenant_id":"t_100"}`)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, resp.State)
	}
	resp, err := e.invoke("send_sms", e.key("sms"), `{"to":"+14155550100","body":"Your work order is booked."}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	_, err = e.invoke("launch_rocket", e.key("rocket"), `{}`)
	requireRefusal(t, err, http.StatusNotFound, mt.CodeUnknownTool)
	_, err = e.invoke("send_sms", e.key("bad-sms"), `{"to":"555-1234","body":"hi"}`)
	requireRefusal(t, err, http.StatusUnprocessableEntity, mt.CodeInvalidArgs)
	e.requestRefund("refund")

	other := "call-" + randomID()
	req := invokeRequest(other, "create_work_order", other+":wo", woArgs)
	req.SessionContext = sessionFacts
	wo, err := e.agent.Invoke(e.ctx, req)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, wo.State, "%+v", wo.Observation)
	_, err = e.agent.Rollback(e.ctx, other, "caller changed their mind")
	require.NoError(t, err)

	families, body := e.scrape()

	// What the ledger holds, read through its own listings.
	wantInvocations := map[string]float64{}
	for _, session := range []string{e.session, other} {
		invs, err := e.store.InvocationListBySession(e.ctx, session)
		require.NoError(t, err)
		for _, inv := range invs {
			wantInvocations[inv.Tool+"/"+string(inv.Route)+"/"+string(inv.State)]++
		}
	}
	require.Equal(t, wantInvocations, byLabels(families["maestro_invocations"], "tool", "route", "state"))
	require.Equal(t, float64(2), wantInvocations["lookup_tenant/read/succeeded"], "the script's reads")
	require.Equal(t, float64(1), wantInvocations["issue_refund/gated/awaiting_approval"], "the script's refund")

	refusals, err := e.store.RefusalList(e.ctx, 0)
	require.NoError(t, err)
	wantRefusals := map[string]float64{}
	for _, r := range refusals {
		wantRefusals[string(r.Code)]++
	}
	require.Equal(t, wantRefusals, byLabels(families["maestro_refusals_total"], "code"))
	require.Equal(t, float64(1), wantRefusals[string(mt.CodeUnknownTool)])
	require.Equal(t, float64(1), wantRefusals[string(mt.CodeInvalidArgs)])

	pending, err := e.ops.Approvals(e.ctx, "pending")
	require.NoError(t, err)
	require.Len(t, pending.Approvals, 1)
	require.Equal(t, map[string]float64{"": 1}, byLabels(families["maestro_approvals_pending"]))
	age := families["maestro_approval_oldest_pending_age_seconds"].GetMetric()[0].GetGauge().GetValue()
	require.Greater(t, age, 0.0, "the refund has waited")

	undo, err := e.store.UndoListBySession(e.ctx, other)
	require.NoError(t, err)
	wantCompensations := map[string]float64{"compensated": 0, "failed": 0, "skipped": 0}
	for _, u := range undo {
		wantCompensations[string(u.Status)]++
	}
	require.Equal(t, float64(1), wantCompensations["compensated"], "the work order was cancelled")
	require.Equal(t, wantCompensations, byLabels(families["maestro_compensations"], "outcome"))
	require.Equal(t, map[string]float64{"": 1}, byLabels(families["maestro_sessions_rolled_back"]))
	require.Equal(t, map[string]float64{"effect": 0, "post_call": 0, "signal": 0}, byLabels(families["maestro_reconciliations_open"], "kind"))
	require.Equal(t, map[string]float64{"": 1}, byLabels(families["maestro_ledger_up"]))

	// Provider latency is this process's: one observation per provider
	// call, labelled by provider and effect class only.
	latency := families["maestro_provider_call_duration_seconds"]
	require.NotNil(t, latency)
	calls := map[string]uint64{}
	for _, m := range latency.GetMetric() {
		calls[label(m, "provider")] += m.GetHistogram().GetSampleCount()
		require.NotEmpty(t, label(m, "effect"))
	}
	require.Equal(t, uint64(1), calls[string(mt.KindTwilioSMS)], "one text")
	require.GreaterOrEqual(t, calls["http"], uint64(4), "two reads, the work order and its cancellation")

	// Temporal's SDK metrics come through the same registry.
	require.NotEmpty(t, temporalFamilies(families), "Temporal SDK metrics are exported")

	// No label carries call data.
	require.NotContains(t, body, e.session)
	require.NotContains(t, body, other)
	require.NotContains(t, body, "t_100")
	require.NotContains(t, body, "+14155550100")
}

// TestEveryProcessServesMetrics runs an API process and a worker
// process: both serve /metrics, report the same ledger totals, and each
// its own provider calls and Temporal SDK metrics.
func TestEveryProcessServesMetrics(t *testing.T) {
	t.Parallel()
	dep := newDeployment(t)
	ctx := t.Context()
	apiProc := dep.start(dep.config(server.RoleAPI))
	workerProc := dep.start(dep.config(server.RoleWorker))

	agent := apiclient.New(apiProc.URL(), rolesAgentKey, apiclient.Options{})
	session := "call-" + randomID()
	req := invokeRequest(session, "send_sms", session+":sms", smsArgs)
	req.SessionContext = sessionFacts
	admitted, err := agent.Invoke(ctx, req)
	require.NoError(t, err)
	done, err := agent.Wait(ctx, admitted.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)

	apiMetrics, _ := scrapeURL(t, apiProc.URL())
	workerMetrics, _ := scrapeURL(t, workerProc.URL())
	want := map[string]float64{"send_sms/" + string(done.Route) + "/succeeded": 1}
	require.Equal(t, want, byLabels(apiMetrics["maestro_invocations"], "tool", "route", "state"))
	require.Equal(t, want, byLabels(workerMetrics["maestro_invocations"], "tool", "route", "state"))

	twilio := func(families map[string]*dto.MetricFamily) uint64 {
		var n uint64
		for _, m := range families["maestro_provider_call_duration_seconds"].GetMetric() {
			if label(m, "provider") == string(mt.KindTwilioSMS) {
				n += m.GetHistogram().GetSampleCount()
			}
		}
		return n
	}
	require.Equal(t, uint64(1), twilio(workerMetrics), "the worker sent the text")
	require.Zero(t, twilio(apiMetrics), "the API process called no provider")
	require.NotEmpty(t, temporalFamilies(apiMetrics), "the API's Temporal client reports")
	require.NotEmpty(t, temporalFamilies(workerMetrics), "the worker reports")
}

// The trace of one call runs from the HTTP request through the workflow
// and its activity to the provider call, and the observation names it.
func TestTraceRunsFromRequestToProvider(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	e := setup(t, withTelemetry(newTelemetry(t, telemetry.Config{SpanProcessor: rec})))

	resp, err := e.invoke("create_work_order", e.key("wo"), woArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	traceID := resp.Observation.Source.TraceID
	require.NotEmpty(t, traceID, "the observation names its trace")
	inv, err := e.store.InvocationGetByKey(e.ctx, e.key("wo"))
	require.NoError(t, err)
	require.Equal(t, traceID, inv.Observation.Source.TraceID, "the ledger's observation names it too")

	// The spans end as the request, the workflow and the activity do.
	var provider sdktrace.ReadOnlySpan
	var spans map[trace.SpanID]sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		spans = map[trace.SpanID]sdktrace.ReadOnlySpan{}
		provider = nil
		for _, s := range rec.Ended() {
			if s.SpanContext().TraceID().String() != traceID {
				continue
			}
			spans[s.SpanContext().SpanID()] = s
			if s.Name() == "provider http" {
				provider = s
			}
		}
		return provider != nil && rootOf(spans, provider).Name() == "POST /v1/invocations"
	}, time.Minute, 50*time.Millisecond, "a provider span under the request's span")

	var chain []string
	for s := provider; s != nil; s = spans[s.Parent().SpanID()] {
		chain = append(chain, s.Name())
	}
	joined := strings.Join(chain, " < ")
	require.Contains(t, joined, "provider http < RunActivity:Execute < StartActivity:Execute < RunWorkflow:")
	require.Contains(t, joined, "StartWorkflow:")
	require.True(t, strings.HasSuffix(joined, "POST /v1/invocations"), joined)
}

// rootOf follows s's parents among spans as far as they go.
func rootOf(spans map[trace.SpanID]sdktrace.ReadOnlySpan, s sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	for {
		p, ok := spans[s.Parent().SpanID()]
		if !ok {
			return s
		}
		s = p
	}
}

// After a read, a text, a refund left for approval and a canary run,
// /metrics passes promtool's lint, and the README's metrics table names
// every maestro and Temporal series served, and serves every maestro
// series it names.
func TestMetricsPassPromtoolAndAreDocumented(t *testing.T) {
	t.Parallel()
	e := setup(t, withTelemetry(newTelemetry(t, telemetry.Config{})), func(o *options) { o.catalog = canaryCatalog(t) })
	_, err := e.ops.CanaryRun(e.ctx)
	require.NoError(t, err)
	read, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, read.State)
	text, err := e.invoke("send_sms", e.key("sms"), smsArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, text.State, "%+v", text.Observation)
	e.requestRefund("refund")
	_, err = e.invoke("launch_rocket", e.key("rocket"), `{}`)
	requireRefusal(t, err, http.StatusNotFound, mt.CodeUnknownTool)

	families, body := e.scrape()
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	require.NoError(t, err)
	require.Empty(t, problems, "promtool check metrics")

	documented, err := telemetrytest.DocumentedMetrics("../../README.md")
	require.NoError(t, err)
	for name := range families {
		if strings.HasPrefix(name, "maestro_") || strings.HasPrefix(name, "temporal_") {
			require.True(t, documented[name], "%s is served but not in the README's metrics table", name)
		}
	}
	for name := range documented {
		if strings.HasPrefix(name, "maestro_") {
			require.Contains(t, families, name, "the README lists %s but it is not served", name)
		}
	}
	require.Contains(t, families, "maestro_canary_green")
}
