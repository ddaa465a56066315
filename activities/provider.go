package activities

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/maestro-run/maestro/internal/connectors"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// ProviderObserver times and traces provider calls. Start begins one
// call of provider (a connector kind) for a tool of effect class effect
// and returns the context to make it with and the function that ends it.
type ProviderObserver interface {
	ProviderCall(ctx context.Context, provider, effect string) (context.Context, func(error))
}

// do makes one provider call, observed when an observer is configured.
func (a *Activities) do(ctx context.Context, tool *tools.Tool, call connectors.Call) (connectors.Result, error) {
	if a.cfg.Providers == nil {
		return a.cfg.Connectors.Do(ctx, call)
	}
	ctx, done := a.cfg.Providers.ProviderCall(ctx, string(call.Kind), string(tool.Effect))
	res, err := a.cfg.Connectors.Do(ctx, call)
	done(err)
	return res, err
}

// withTraceID records the trace the call ran in in the observation's
// source, so an operator can go from an answer to its trace. Without
// tracing there is no trace, and the source is left as it is.
func withTraceID(ctx context.Context, obs mt.Observation) mt.Observation {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() || obs.Source == nil || obs.Source.TraceID != "" {
		return obs
	}
	src := *obs.Source
	src.TraceID = sc.TraceID().String()
	obs.Source = &src
	return obs
}
