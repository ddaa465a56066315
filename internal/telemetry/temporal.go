package telemetry

import (
	"fmt"

	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// ClientOptions adds the Temporal SDK's metrics (their tagged handlers
// and instruments built once, see sdkMetrics) and, while tracing is on,
// its tracing interceptor to opts. Workers made from the client inherit
// both, so a span continues from the request that started a workflow
// through the workflow to its activities.
func (t *Telemetry) ClientOptions(opts client.Options) (client.Options, error) {
	onError := func(err error) {
		t.cfg.Logger.Warn("error recording a Temporal metric", "err", err)
	}
	opts.MetricsHandler = newSDKMetrics(temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter:                t.meters.Meter("temporal-sdk-go"),
		UseMonotonicCounters: true,
		OnError:              onError,
	}), onError)
	if !t.Tracing() {
		return opts, nil
	}
	tracing, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:            t.tracers.Tracer("temporal-sdk-go"),
		TextMapPropagator: t.propagator,
	})
	if err != nil {
		return client.Options{}, fmt.Errorf("error creating the Temporal tracing interceptor: %w", err)
	}
	opts.Interceptors = append([]interceptor.ClientInterceptor{tracing}, opts.Interceptors...)
	return opts, nil
}
