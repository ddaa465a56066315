package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// CanaryResult is what one canary run found for one tool.
type CanaryResult struct {
	RunID string
	Tool  string
	// OK is set when the provider confirmed the effect the canary asked
	// for.
	OK bool
	// Detail says what was checked, or why it failed.
	Detail string
	// Receipt is the provider's receipt for the canary call; nil when the
	// call failed before one existed.
	Receipt *maestrotype.Receipt
	// CheckedAt is stamped by the database on insert.
	CheckedAt time.Time
	// LastSuccessAt is the tool's last passing check; set only by
	// CanaryLastResults, nil when the tool never passed.
	LastSuccessAt *time.Time
}

// CanaryRecord stores the results of one canary run, all at once.
func (l *ledger) CanaryRecord(ctx context.Context, results []CanaryResult) error {
	for _, r := range results {
		if r.RunID == "" || r.Tool == "" {
			return errors.New("error recording canary results: run ID and tool are required")
		}
	}
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		for _, r := range results {
			receipt, err := jsonArg(r.Receipt)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, l.query("CanaryResultInsert"), r.RunID, r.Tool, r.OK, r.Detail, receipt); err != nil {
				return fmt.Errorf("error inserting the result for %s: %w", r.Tool, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("error recording canary results: %w", err)
	}
	return nil
}

// CanaryLastResults returns each tool's last canary result, with the time
// of its last success, sorted by tool.
func (l *ledger) CanaryLastResults(ctx context.Context) ([]CanaryResult, error) {
	out, err := queryAll(ctx, l.conn, scanCanaryResult, l.query("CanaryLastResults"))
	if err != nil {
		return nil, fmt.Errorf("error reading the last canary results: %w", err)
	}
	return out, nil
}

// CanaryRunResults returns one run's results, sorted by tool.
func (l *ledger) CanaryRunResults(ctx context.Context, runID string) ([]CanaryResult, error) {
	out, err := queryAll(ctx, l.conn, scanCanaryResult, l.query("CanaryRunResults"), runID)
	if err != nil {
		return nil, fmt.Errorf("error reading canary run %s: %w", runID, err)
	}
	return out, nil
}

func scanCanaryResult(row rowScanner) (CanaryResult, error) {
	var r CanaryResult
	err := row.Scan(&r.RunID, &r.Tool, &r.OK, &r.Detail,
		jsonCol[*maestrotype.Receipt]{&r.Receipt}, timeCol{&r.CheckedAt}, nullTimeCol{&r.LastSuccessAt})
	return r, err
}
