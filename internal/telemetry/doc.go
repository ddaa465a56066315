// Package telemetry holds what a maestro process reports about itself:
// Prometheus metrics on /metrics (Temporal's SDK metrics, provider call
// latency, and the ledger's totals counted at scrape time) and
// OpenTelemetry traces from the HTTP request through Temporal to the
// provider call, exported by OTLP only when configured.
package telemetry
