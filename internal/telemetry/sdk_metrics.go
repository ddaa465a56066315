package telemetry

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// sdkMetricsLimit bounds how many tagged handlers and instruments one
// process remembers for the Temporal SDK. The SDK's tags and names come
// from a small vocabulary (operations, workflow and activity types, task
// queues, failure reasons), far below it; past it a handler builds what
// it is asked for each time, as OpenTelemetry's does, and memory stays
// bounded whatever the tags turn out to be.
const sdkMetricsLimit = 4096

// sdkMetrics is the Temporal SDK's metrics handler with what it builds
// remembered. The SDK asks its handler for a tagged copy and then an
// instrument by name at nearly every record (each request to the
// frontend, each task a worker runs), and OpenTelemetry's handler builds
// both anew each time: an attribute set sorted from the tags, an
// instrument name validated and looked up under the meter's lock. Each
// is built once here; what is recorded is the same.
type sdkMetrics struct {
	inner client.MetricsHandler
	// otel is inner's meter and its tags as options, made once, when
	// inner is OpenTelemetry's handler: each record then passes them as
	// they are instead of wrapping the tags anew.
	otel    *otelTags
	onError func(error)
	// held counts the entries remembered by this handler and every
	// tagged copy made from it.
	held *atomic.Int64

	tagged   sync.Map // tags key → *sdkMetrics
	counters sync.Map // name → client.MetricsCounter
	gauges   sync.Map // name → client.MetricsGauge
	timers   sync.Map // name → client.MetricsTimer
}

var _ client.MetricsHandler = (*sdkMetrics)(nil)

// newSDKMetrics wraps inner; onError hears an instrument OpenTelemetry
// refuses to make, as inner's own OnError would.
func newSDKMetrics(inner client.MetricsHandler, onError func(error)) *sdkMetrics {
	m := &sdkMetrics{inner: inner, held: new(atomic.Int64), onError: onError}
	m.otel = otelTagsOf(inner)
	return m
}

// WithTags returns the handler with tags added to this one's.
func (m *sdkMetrics) WithTags(tags map[string]string) client.MetricsHandler {
	key := tagsKey(tags)
	if got, ok := m.tagged.Load(key); ok {
		return got.(*sdkMetrics)
	}
	child := &sdkMetrics{inner: m.inner.WithTags(tags), held: m.held, onError: m.onError}
	child.otel = otelTagsOf(child.inner)
	if !m.hold() {
		return child
	}
	got, _ := m.tagged.LoadOrStore(key, child)
	return got.(*sdkMetrics)
}

// Counter returns the counter named name, with this handler's tags.
func (m *sdkMetrics) Counter(name string) client.MetricsCounter {
	return remembered(m, &m.counters, name, m.counter)
}

// Gauge returns the gauge named name, with this handler's tags.
func (m *sdkMetrics) Gauge(name string) client.MetricsGauge {
	return remembered(m, &m.gauges, name, m.gauge)
}

// Timer returns the timer named name, with this handler's tags.
func (m *sdkMetrics) Timer(name string) client.MetricsTimer {
	return remembered(m, &m.timers, name, m.timer)
}

// counter, gauge and timer make what OpenTelemetry's handler makes (a
// monotonic counter, a gauge, a histogram in seconds), with the tags'
// options made once.
func (m *sdkMetrics) counter(name string) client.MetricsCounter {
	if m.otel == nil {
		return m.inner.Counter(name)
	}
	c, err := m.otel.meter.Int64Counter(name)
	if err != nil {
		m.onError(err)
		return client.MetricsNopHandler.Counter(name)
	}
	return otelCounter{c: c, opts: m.otel.add}
}

func (m *sdkMetrics) gauge(name string) client.MetricsGauge {
	if m.otel == nil {
		return m.inner.Gauge(name)
	}
	g, err := m.otel.meter.Float64Gauge(name)
	if err != nil {
		m.onError(err)
		return client.MetricsNopHandler.Gauge(name)
	}
	return otelGauge{g: g, opts: m.otel.record}
}

func (m *sdkMetrics) timer(name string) client.MetricsTimer {
	if m.otel == nil {
		return m.inner.Timer(name)
	}
	h, err := m.otel.meter.Float64Histogram(name, metric.WithUnit("s"))
	if err != nil {
		m.onError(err)
		return client.MetricsNopHandler.Timer(name)
	}
	return otelTimer{h: h, opts: m.otel.record}
}

// Unwrap lets the SDK's contrib packages reach OpenTelemetry's handler
// (temporalotel.ExtractMetricsHandler), as they could before.
func (m *sdkMetrics) Unwrap() client.MetricsHandler { return m.inner }

// hold takes one of the entries the limit allows, reporting false when
// none is left.
func (m *sdkMetrics) hold() bool {
	if m.held.Add(1) > sdkMetricsLimit {
		m.held.Add(-1)
		return false
	}
	return true
}

func remembered[T any](m *sdkMetrics, cache *sync.Map, name string, build func(string) T) T {
	if got, ok := cache.Load(name); ok {
		return got.(T)
	}
	made := build(name)
	if !m.hold() {
		return made
	}
	got, _ := cache.LoadOrStore(name, made)
	return got.(T)
}

// tagsKey names a set of tags whatever the map's order: its keys sorted,
// each with its value, NUL separated (neither holds a NUL).
func tagsKey(tags map[string]string) string {
	switch len(tags) {
	case 0:
		return ""
	case 1:
		for k, v := range tags {
			return k + "\x00" + v
		}
	}
	var buf [8]string
	keys := buf[:0]
	size := 0
	for k, v := range tags {
		keys = append(keys, k)
		size += len(k) + len(v) + 2
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(size)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(tags[k])
		b.WriteByte(0)
	}
	return b.String()
}

// otelTags is an OpenTelemetry handler's meter and its tags as the
// options its instruments take.
type otelTags struct {
	meter  metric.Meter
	add    []metric.AddOption
	record []metric.RecordOption
}

// otelTagsOf is inner's meter and tags, or nil when inner is not
// OpenTelemetry's handler.
func otelTagsOf(inner client.MetricsHandler) *otelTags {
	h, ok := inner.(temporalotel.MetricsHandler)
	if !ok {
		return nil
	}
	set := metric.WithAttributeSet(h.GetAttributes())
	return &otelTags{meter: h.GetMeter(), add: []metric.AddOption{set}, record: []metric.RecordOption{set}}
}

type otelCounter struct {
	c    metric.Int64Counter
	opts []metric.AddOption
}

func (c otelCounter) Inc(d int64) { c.c.Add(context.Background(), d, c.opts...) }

type otelGauge struct {
	g    metric.Float64Gauge
	opts []metric.RecordOption
}

func (g otelGauge) Update(f float64) { g.g.Record(context.Background(), f, g.opts...) }

type otelTimer struct {
	h    metric.Float64Histogram
	opts []metric.RecordOption
}

func (t otelTimer) Record(d time.Duration) { t.h.Record(context.Background(), d.Seconds(), t.opts...) }
