package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Telemetry is one process's metrics registry and tracer provider. Each
// process has its own registry, not Prometheus's global one, so several
// in one test binary never collide.
type Telemetry struct {
	cfg      Config
	registry *prometheus.Registry
	meters   *sdkmetric.MeterProvider
	// tracers is a no-op provider while tracing is off.
	tracers    trace.TracerProvider
	sdkTracers *sdktrace.TracerProvider // nil while tracing is off
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	providers  *prometheus.HistogramVec
}

// New builds the registry, the meter provider behind Temporal's metrics
// and, when configured, the tracer provider and its exporter.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	t := &Telemetry{cfg: cfg, registry: prometheus.NewRegistry(),
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	t.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	t.providers = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "maestro_provider_call_duration_seconds",
		Help:    "How long provider calls made by this process took, by provider, effect class and outcome (ok or error).",
		Buckets: durationBuckets(),
	}, []string{"provider", "effect", "outcome"})
	t.registry.MustRegister(t.providers)

	exporter, err := otelprom.New(otelprom.WithRegisterer(t.registry), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, fmt.Errorf("error creating the Prometheus exporter: %w", err)
	}
	t.meters = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter), sdkmetric.WithView(view))

	t.tracers = noop.NewTracerProvider()
	if cfg.Tracing() {
		res := resource.NewSchemaless(attribute.String("service.name", cfg.ServiceName))
		opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
		if cfg.SpanProcessor != nil {
			opts = append(opts, sdktrace.WithSpanProcessor(cfg.SpanProcessor))
		}
		if cfg.TracesEndpoint != "" {
			exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.TracesEndpoint))
			if err != nil {
				_ = t.meters.Shutdown(ctx)
				return nil, fmt.Errorf("error creating the OTLP trace exporter for %s: %w", cfg.TracesEndpoint, err)
			}
			opts = append(opts, sdktrace.WithBatcher(exp))
		}
		t.sdkTracers = sdktrace.NewTracerProvider(opts...)
		t.tracers = t.sdkTracers
	}
	t.tracer = t.tracers.Tracer("github.com/maestro-run/maestro")
	return t, nil
}

// Registry is the process's Prometheus registry.
func (t *Telemetry) Registry() *prometheus.Registry { return t.registry }

// TracerProvider is the process's tracer provider: a no-op one while
// tracing is off.
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tracers }

// Tracing reports whether this process makes spans.
func (t *Telemetry) Tracing() bool { return t.sdkTracers != nil }

// Shutdown flushes the spans still buffered and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	if t.sdkTracers != nil {
		errs = append(errs, t.sdkTracers.Shutdown(ctx))
	}
	errs = append(errs, t.meters.Shutdown(ctx))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("error shutting telemetry down: %w", err)
	}
	return nil
}

// MetricsHandler serves the registry in Prometheus's text format. A
// collector that fails (the ledger not answering) leaves its metrics out
// and the rest are still served.
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      slogErrorLog{t.cfg.Logger},
	})
}

type slogErrorLog struct{ l *slog.Logger }

func (s slogErrorLog) Println(v ...any) {
	s.l.Warn("error collecting metrics", "err", fmt.Sprint(v...))
}
