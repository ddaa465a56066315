package bench

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Chart geometry, in SVG user units. Each concurrency gets a panel of
// grouped bars: one group per scenario, one bar per percentile.
const (
	chartLeft     = 70.0
	chartRight    = 20.0
	chartTop      = 56.0
	barWidth      = 10.0
	groupGap      = 16.0
	panelTitle    = 22.0
	plotHeight    = 170.0
	labelHeight   = 110.0
	panelHeight   = panelTitle + plotHeight + labelHeight
	chartFontSize = 11
)

// percentileBars are the bars of each group, with their colours.
var percentileBars = []struct {
	name  string
	color string
	pick  func(stats) time.Duration
}{
	{"p50", "#4e79a7", func(s stats) time.Duration { return s.p50 }},
	{"p95", "#f28e2b", func(s stats) time.Duration { return s.p95 }},
	{"p99", "#e15759", func(s stats) time.Duration { return s.p99 }},
}

// writeChart draws latency percentiles per scenario, one panel per
// concurrency, on a log scale so a direct call and an approval round trip
// fit one axis.
func (rep report) writeChart(w io.Writer) error {
	scenarios, concs := rep.axes()
	lo, hi := rep.latencyRange()
	group := float64(len(percentileBars))*barWidth + groupGap
	width := chartLeft + float64(len(scenarios))*group + chartRight
	height := chartTop + float64(len(concs))*panelHeight

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="%d">`+"\n",
		width, height, width, height, chartFontSize)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="22" font-size="15" font-weight="bold">What maestro's guarantees cost: latency per call (ms, log scale)</text>`+"\n", chartLeft)
	for i, bar := range percentileBars {
		x := chartLeft + float64(i)*60
		fmt.Fprintf(&b, `<rect x="%.0f" y="34" width="12" height="12" fill="%s"/><text x="%.0f" y="44">%s</text>`+"\n", x, bar.color, x+16, bar.name)
	}
	for p, conc := range concs {
		top := chartTop + float64(p)*panelHeight
		rep.drawPanel(&b, panelGeometry{top: top, width: width, group: group, lo: lo, hi: hi}, conc, scenarios)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type panelGeometry struct {
	top, width, group float64
	// lo and hi bound the log axis, in milliseconds.
	lo, hi float64
}

// y maps a latency in milliseconds onto the panel's plot area.
func (g panelGeometry) y(v float64) float64 {
	v = math.Min(math.Max(v, g.lo), g.hi)
	frac := (math.Log10(v) - math.Log10(g.lo)) / (math.Log10(g.hi) - math.Log10(g.lo))
	return g.top + panelTitle + plotHeight*(1-frac)
}

func (rep report) drawPanel(b *strings.Builder, g panelGeometry, conc int, scenarios []string) {
	base := g.top + panelTitle + plotHeight
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-weight="bold">%d concurrent caller%s</text>`+"\n", chartLeft, g.top+14, conc, plural(conc))
	for e := math.Log10(g.lo); e <= math.Log10(g.hi)+1e-9; e++ {
		v := math.Pow(10, math.Round(e))
		y := g.y(v)
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#dddddd"/>`+"\n", chartLeft, y, g.width-chartRight, y)
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", chartLeft-6, y+4, formatTick(v))
	}
	fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#333333"/>`+"\n", chartLeft, base, g.width-chartRight, base)
	mid := g.top + panelTitle + plotHeight/2
	fmt.Fprintf(b, `<text x="16" y="%.1f" text-anchor="middle" fill="#555555" transform="rotate(-90 16 %.1f)">ms</text>`+"\n", mid, mid)
	for i, name := range scenarios {
		x0 := chartLeft + float64(i)*g.group + groupGap/2
		if i > 0 && opOf(name) != opOf(scenarios[i-1]) {
			// A rule between ops keeps each op's paths together.
			x := x0 - groupGap/2
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#bbbbbb" stroke-dasharray="3 3"/>`+"\n", x, g.top+panelTitle, x, base)
		}
		if r, ok := rep.find(name, conc); ok {
			for j, bar := range percentileBars {
				v := ms(bar.pick(r.stats))
				if v <= 0 {
					continue
				}
				y := g.y(v)
				fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.0f" height="%.1f" fill="%s"><title>%s %s at %d: %.2f ms</title></rect>`+"\n",
					x0+float64(j)*barWidth, y, barWidth, base-y, bar.color, esc(name), bar.name, conc, v)
			}
		}
		cx := x0 + float64(len(percentileBars))*barWidth/2
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" transform="rotate(-40 %.1f %.1f)">%s</text>`+"\n",
			cx, base+14, cx, base+14, esc(name))
	}
}

// axes lists the scenarios and concurrencies in the order they were run.
func (rep report) axes() (scenarios []string, concs []int) {
	seenS, seenC := map[string]bool{}, map[int]bool{}
	for _, r := range rep.results {
		if !seenS[r.scenario] {
			seenS[r.scenario] = true
			scenarios = append(scenarios, r.scenario)
		}
		if !seenC[r.concurrency] {
			seenC[r.concurrency] = true
			concs = append(concs, r.concurrency)
		}
	}
	return scenarios, concs
}

// latencyRange is the log axis: whole decades around every bar drawn.
func (rep report) latencyRange() (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, r := range rep.results {
		for _, bar := range percentileBars {
			if v := ms(bar.pick(r.stats)); v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == 0 {
		return 0.1, 1000
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

func (rep report) find(scenario string, conc int) (result, bool) {
	for _, r := range rep.results {
		if r.scenario == scenario && r.concurrency == conc {
			return r, true
		}
	}
	return result{}, false
}

// opOf is the op part of a scenario name ("maestro/read" → "read").
func opOf(scenario string) string {
	_, op, _ := strings.Cut(scenario, "/")
	return op
}

func formatTick(v float64) string {
	if v >= 1 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", v)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// esc escapes text for an SVG element's content.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails a write
	return b.String()
}
