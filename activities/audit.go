package activities

import (
	"context"
	"fmt"

	"github.com/maestro-run/maestro/workflows"
)

// AuditScan reconciles money-class effects against approval records and
// logs every divergence. It never repairs anything: a divergence is for a
// human to investigate.
func (a *Activities) AuditScan(ctx context.Context) (workflows.AuditResult, error) {
	findings, err := a.cfg.Store.AuditMoneyEffects(ctx)
	if err != nil {
		return workflows.AuditResult{}, retryable(ErrTypeLedger, fmt.Errorf("error running audit scan: %w", err))
	}
	for _, f := range findings {
		a.cfg.Logger.Error("audit divergence", "kind", f.Kind, "operation_key", f.OperationKey, "tool", f.Tool, "approval", f.ApprovalID, "detail", f.Detail)
	}
	if len(findings) == 0 {
		a.cfg.Logger.Info("audit scan clean")
	}
	return workflows.AuditResult{Findings: len(findings)}, nil
}
