package bench

import (
	"encoding/csv"
	"io"
	"strconv"
)

// csvHeader names the CSV columns. Times are milliseconds; a cell is empty
// where the column does not apply (no session, no ratio, a ledger whose
// round trips were not counted). The ledger columns count everything
// maestro asked of its ledger during the cell, so on the paths that do not
// go through maestro they show its background work alone.
var csvHeader = []string{
	"scenario", "path", "op", "tool", "measures", "concurrency", "calls", "failed",
	"p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms", "throughput_per_s",
	"workflow_p50_ms", "activity_p50_ms", "outside_p50_ms",
	"events_per_call", "session_events_per_call", "baseline_path", "p50_vs_baseline", "p50_vs_temporal", "p50_vs_direct",
	"ledger_round_trips_per_call", "ledger_statements_per_call", "ledger_transactions_per_call",
}

// writeCSV writes one row per cell.
func (rep report) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, r := range rep.results {
		baselinePath, vsBaseline, vsTemporal, vsDirect := "", "", "", ""
		if q, ok := rep.ratioFor(r); ok {
			baselinePath = q.baselinePath
			vsBaseline, vsTemporal, vsDirect = csvRatio(q.vsBaseline()), csvRatio(q.vsTemporal()), csvRatio(q.vsDirect())
		}
		ledgerRT, ledgerSt, ledgerTx := "", "", ""
		if r.ledger.counted {
			ledgerRT, ledgerSt, ledgerTx = csvFloat(r.ledger.roundTrips, 2), csvFloat(r.ledger.statements, 2), csvFloat(r.ledger.transactions, 2)
		}
		run, act, outside := "", "", ""
		if r.path != pathDirect {
			run, act, outside = csvFloat(ms(r.split.run), 3), csvFloat(ms(r.split.activity), 3), csvFloat(ms(r.split.outside), 3)
		}
		session := ""
		if r.sessionEvents >= 0 {
			session = csvFloat(r.sessionEvents, 2)
		}
		err := cw.Write([]string{
			r.scenario, r.path, r.op, r.tool, r.measures,
			strconv.Itoa(r.concurrency), strconv.Itoa(r.calls), strconv.Itoa(r.failed),
			csvFloat(ms(r.stats.p50), 3), csvFloat(ms(r.stats.p95), 3), csvFloat(ms(r.stats.p99), 3),
			csvFloat(ms(r.stats.slowest), 3), csvFloat(ms(r.stats.mean), 3), csvFloat(r.stats.throughput, 2),
			run, act, outside,
			csvFloat(r.events, 2), session, baselinePath, vsBaseline, vsTemporal, vsDirect,
			ledgerRT, ledgerSt, ledgerTx,
		})
		if err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvFloat(x float64, prec int) string {
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// csvRatio leaves the cell empty for a ratio whose floor was not run.
func csvRatio(x float64) string {
	if x == 0 {
		return ""
	}
	return csvFloat(x, 3)
}
