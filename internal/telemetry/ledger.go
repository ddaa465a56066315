package telemetry

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maestro-run/maestro/internal/ledger"
)

// ledgerScrapeTimeout bounds the ledger's queries during one scrape.
const ledgerScrapeTimeout = 5 * time.Second

// Counter is what the ledger collector reads: ledger.Store has it.
type Counter interface {
	MetricCounts(ctx context.Context) (ledger.MetricCounts, error)
	CanaryLastResults(ctx context.Context) ([]ledger.CanaryResult, error)
}

// CollectLedger registers the ledger's totals, counted by the ledger at
// each scrape: every process reports the same numbers, whichever
// process wrote them.
func (t *Telemetry) CollectLedger(c Counter) error {
	if err := t.registry.Register(&ledgerCollector{ledger: c, now: time.Now}); err != nil {
		return fmt.Errorf("error registering the ledger metrics: %w", err)
	}
	return nil
}

var (
	descLedgerUp = prometheus.NewDesc("maestro_ledger_up",
		"1 when the ledger answered this scrape's queries, 0 when it did not and the ledger's metrics are left out.", nil, nil)
	descInvocations = prometheus.NewDesc("maestro_invocations",
		"Invocations recorded in the ledger, by tool, route and state (final states such as succeeded, failed, rejected; or running, awaiting_approval).",
		[]string{"tool", "route", "state"}, nil)
	descRefusals = prometheus.NewDesc("maestro_refusals_total",
		"Calls refused before anything ran, by refusal code.", []string{"code"}, nil)
	descApprovalsPending = prometheus.NewDesc("maestro_approvals_pending",
		"Approval requests waiting for a decision.", nil, nil)
	descApprovalOldest = prometheus.NewDesc("maestro_approval_oldest_pending_age_seconds",
		"How long the oldest undecided approval request has waited; 0 when none is pending.", nil, nil)
	descReconciliations = prometheus.NewDesc("maestro_reconciliations_open",
		"Held work waiting for reconciliation, by kind: effect (outcome unknown), post_call (held post-call work) or signal (a signal Temporal refused as invalid).",
		[]string{"kind"}, nil)
	descCompensations = prometheus.NewDesc("maestro_compensations",
		"Compensations attempted, by outcome: compensated, failed or skipped.", []string{"outcome"}, nil)
	descRolledBack = prometheus.NewDesc("maestro_sessions_rolled_back",
		"Sessions with at least one compensation attempted, by a rollback or a failure's saga.", nil, nil)
	descCanaryGreen = prometheus.NewDesc("maestro_canary_green",
		"1 when the tool's last reality canary was confirmed by its provider, 0 when it failed.", []string{"tool"}, nil)
	descCanaryLastSuccess = prometheus.NewDesc("maestro_canary_last_success_timestamp_seconds",
		"When the tool's reality canary was last confirmed by its provider, as Unix time; absent until it first is.", []string{"tool"}, nil)
)

type ledgerCollector struct {
	ledger Counter
	now    func() time.Time
}

func (c *ledgerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLedgerUp, descInvocations, descRefusals, descApprovalsPending,
		descApprovalOldest, descReconciliations, descCompensations, descRolledBack, descCanaryGreen, descCanaryLastSuccess} {
		ch <- d
	}
}

func (c *ledgerCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ledgerScrapeTimeout)
	defer cancel()
	m, err := c.ledger.MetricCounts(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descLedgerUp, prometheus.GaugeValue, 0)
		ch <- prometheus.NewInvalidMetric(descInvocations, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(descLedgerUp, prometheus.GaugeValue, 1)
	for _, inv := range m.Invocations {
		ch <- prometheus.MustNewConstMetric(descInvocations, prometheus.GaugeValue, float64(inv.Count), inv.Tool, inv.Route, inv.State)
	}
	for code, n := range m.Refusals {
		ch <- prometheus.MustNewConstMetric(descRefusals, prometheus.CounterValue, float64(n), code)
	}
	ch <- prometheus.MustNewConstMetric(descApprovalsPending, prometheus.GaugeValue, float64(m.ApprovalsPending))
	age := 0.0
	if !m.OldestPendingApproval.IsZero() {
		age = max(c.now().Sub(m.OldestPendingApproval).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(descApprovalOldest, prometheus.GaugeValue, age)
	for _, kind := range []string{"effect", "post_call", "signal"} {
		ch <- prometheus.MustNewConstMetric(descReconciliations, prometheus.GaugeValue, float64(m.ReconciliationsOpen[kind]), kind)
	}
	for _, outcome := range []string{"compensated", "failed", "skipped"} {
		ch <- prometheus.MustNewConstMetric(descCompensations, prometheus.GaugeValue, float64(m.Compensations[outcome]), outcome)
	}
	ch <- prometheus.MustNewConstMetric(descRolledBack, prometheus.GaugeValue, float64(m.SessionsRolledBack))
	canaries, err := c.ledger.CanaryLastResults(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descCanaryGreen, err)
		return
	}
	for _, r := range canaries {
		green := 0.0
		if r.OK {
			green = 1
		}
		ch <- prometheus.MustNewConstMetric(descCanaryGreen, prometheus.GaugeValue, green, r.Tool)
		if r.LastSuccessAt != nil {
			ch <- prometheus.MustNewConstMetric(descCanaryLastSuccess, prometheus.GaugeValue, float64(r.LastSuccessAt.Unix()), r.Tool)
		}
	}
}
