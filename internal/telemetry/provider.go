package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// ProviderCall starts timing one provider call, in a span, and returns
// the context to make the call with and the function that ends it with
// the call's error. provider is the connector kind and effect the tool's
// effect class: neither carries call data.
func (t *Telemetry) ProviderCall(ctx context.Context, provider, effect string) (context.Context, func(error)) {
	start := time.Now()
	if !t.Tracing() {
		// No span to make: the attributes a no-op span would be handed are
		// not built for every provider call.
		return ctx, func(err error) { t.observeProviderCall(provider, effect, start, err) }
	}
	ctx, span := t.tracer.Start(ctx, "provider "+provider, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("maestro.provider", provider), attribute.String("maestro.effect", effect)))
	return ctx, func(err error) {
		if err != nil {
			span.SetStatus(codes.Error, "provider call failed")
		}
		span.End()
		t.observeProviderCall(provider, effect, start, err)
	}
}

// observeProviderCall records one provider call's duration by provider,
// effect class and outcome.
func (t *Telemetry) observeProviderCall(provider, effect string, start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	t.providers.WithLabelValues(provider, effect, outcome).Observe(time.Since(start).Seconds())
}
