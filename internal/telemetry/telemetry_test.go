package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/maestro-run/maestro/internal/telemetry"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestFromEnvReadsTheStandardSettings(t *testing.T) {
	t.Parallel()
	require.Empty(t, telemetry.FromEnv(env(nil)).TracesEndpoint, "off by default")
	require.Equal(t, "http://collector:4318/v1/traces",
		telemetry.FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"})).TracesEndpoint)
	require.Equal(t, "https://traces.example.com/otlp", telemetry.FromEnv(env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://collector:4318",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://traces.example.com/otlp",
	})).TracesEndpoint, "the traces endpoint wins")
}

func TestNewRefusesAnEndpointThatIsNotAURL(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"collector:4318", "ftp://collector", "http://"} {
		_, err := telemetry.New(t.Context(), telemetry.Config{TracesEndpoint: bad})
		require.ErrorContains(t, err, "must be an http or https URL", bad)
	}
}

func newTelemetry(t *testing.T, cfg telemetry.Config) *telemetry.Telemetry {
	t.Helper()
	tel, err := telemetry.New(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return tel
}

func TestHandlerServesMetricsAndPassesTheRest(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t, telemetry.Config{})
	require.False(t, tel.Tracing())
	_, done := tel.ProviderCall(t.Context(), "twilio", "write")
	done(nil)
	srv := httptest.NewServer(tel.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.False(t, trace.SpanContextFromContext(r.Context()).IsValid(), "no spans while tracing is off")
		w.WriteHeader(http.StatusTeapot)
	})))
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `maestro_provider_call_duration_seconds_count{effect="write",outcome="ok",provider="twilio"} 1`)

	resp, err = http.Get(srv.URL + "/v1/tools")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusTeapot, resp.StatusCode)
}

func TestRequestSpanContinuesTheCallersTrace(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tel := newTelemetry(t, telemetry.Config{SpanProcessor: rec})
	inner := make(chan trace.SpanContext, 1)
	srv := httptest.NewServer(tel.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, done := tel.ProviderCall(r.Context(), "http", "read")
		done(nil)
		inner <- trace.SpanContextFromContext(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})))
	t.Cleanup(srv.Close)

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/invocations", strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()

	require.Equal(t, traceID, (<-inner).TraceID().String())
	spans := rec.Ended()
	require.Len(t, spans, 2)
	require.Equal(t, "provider http", spans[0].Name())
	require.Equal(t, "HTTP POST", spans[1].Name())
	require.Equal(t, spans[1].SpanContext().SpanID(), spans[0].Parent().SpanID())
	require.Equal(t, "00f067aa0ba902b7", spans[1].Parent().SpanID().String())
}

// A request's span is named for the route template the mux matched, never
// for its path, which holds IDs.
func TestRequestSpanNamesTheRouteTemplate(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tel := newTelemetry(t, telemetry.Config{SpanProcessor: rec})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sessions/{id}/end", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
	srv := httptest.NewServer(tel.Handler(mux))
	t.Cleanup(srv.Close)

	resp, err := http.Post(srv.URL+"/v1/sessions/call-8812/end", "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)

	spans := rec.Ended()
	require.Len(t, spans, 1)
	require.Equal(t, "POST /v1/sessions/{id}/end", spans[0].Name())
	attrs := map[string]string{}
	for _, kv := range spans[0].Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	require.Equal(t, "/v1/sessions/{id}/end", attrs["http.route"])
	require.Equal(t, "202", attrs["http.response.status_code"])
	for k, v := range attrs {
		require.NotContains(t, v, "call-8812", k)
	}
}
