package telemetry

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Config configures a process's telemetry.
type Config struct {
	// ServiceName names the process in traces. Optional: default
	// "maestro".
	ServiceName string
	// TracesEndpoint is the OTLP/HTTP URL spans are sent to, such as
	// http://collector:4318/v1/traces. Optional: default none, and
	// tracing is off: no spans are made and nothing is exported.
	TracesEndpoint string
	// SpanProcessor receives every span, for a test recording them.
	// Setting it turns tracing on. Optional: default none.
	SpanProcessor sdktrace.SpanProcessor
	// Logger. Optional: default slog.Default().
	Logger *slog.Logger
}

// FromEnv reads the standard OpenTelemetry settings:
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, used as it is, or else
// OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended.
func FromEnv(getenv func(string) string) Config {
	var c Config
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); v != "" {
		c.TracesEndpoint = v
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		c.TracesEndpoint = strings.TrimRight(v, "/") + "/v1/traces"
	}
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		c.ServiceName = v
	}
	return c
}

// WithDefaults returns c with optional fields filled in.
func (c Config) WithDefaults() Config {
	if c.ServiceName == "" {
		c.ServiceName = "maestro"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Tracing reports whether spans are made.
func (c Config) Tracing() bool { return c.TracesEndpoint != "" || c.SpanProcessor != nil }

func (c Config) validate() error {
	if c.TracesEndpoint == "" {
		return nil
	}
	u, err := url.Parse(c.TracesEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (or OTEL_EXPORTER_OTLP_ENDPOINT) must be an http or https URL such as http://collector:4318, got %q", c.TracesEndpoint)
	}
	return nil
}
