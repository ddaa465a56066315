package telemetry

import (
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Handler serves GET /metrics from the registry and passes every other
// request to next, in a span that continues the caller's trace when the
// request carries a traceparent header. /metrics needs no key, as
// Prometheus scrapes it; its labels carry no call data.
func (t *Telemetry) Handler(next http.Handler) http.Handler {
	metrics := t.MetricsHandler()
	traced := next
	if t.Tracing() {
		traced = t.traced(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			metrics.ServeHTTP(w, r)
			return
		}
		traced.ServeHTTP(w, r)
	})
}

func (t *Telemetry) traced(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := t.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		// The route is known only once a mux has matched the request, so
		// the span starts named for the method alone: paths hold session
		// IDs and operation keys.
		ctx, span := t.tracer.Start(ctx, "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method)))
		defer span.End()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		req := r.WithContext(ctx)
		next.ServeHTTP(rec, req)
		// A ServeMux records the pattern it matched on the request it was
		// handed; the template names the span, as OpenTelemetry's HTTP
		// conventions ask, and holds no IDs.
		if route := routeOf(req.Pattern); route != "" {
			span.SetName(r.Method + " " + route)
			span.SetAttributes(attribute.String("http.route", route))
		}
		span.SetAttributes(attribute.Int("http.response.status_code", rec.status))
		if rec.status >= 500 {
			span.SetStatus(codes.Error, fmt.Sprintf("HTTP %d", rec.status))
		}
	})
}

// routeOf is the path template of a ServeMux pattern such as
// "POST /v1/sessions/{id}/end", without its method or host; "" for none.
func routeOf(pattern string) string {
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		return pattern[i:]
	}
	return ""
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection: the API
// flushes and extends deadlines through it.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
