package ledger_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSessionConstraints inserts rows with raw SQL, going around the
// store's Go code, to prove the table itself refuses a session whose
// columns contradict its state.
func TestSessionConstraints(t *testing.T) {
	t.Parallel()

	const insert = `INSERT INTO sessions (id, agent_id, state, facts, halt_step, halt_reason, resolved_by,
		resolve_reason, transcript, ended_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

	type row struct {
		agentID, state, facts                                       string
		haltStep, haltReason, resolvedBy, resolveReason, transcript any
		endedAt                                                     any
	}
	// Times in the text form SQLite stores; PostgreSQL parses it too.
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	// A session that halted, was resolved, halted again and ended: every
	// column is set, and each change below breaks exactly one rule.
	good := row{"agent_1", "ended", `{"tenant_id":"acme"}`, "undo_1: refund", "500", "operator:ops", "fixed",
		`{"turns":[]}`, now}

	refused := map[string]func(r *row){
		"unknown state":                   func(r *row) { r.state, r.transcript, r.endedAt = "awaiting_approval", nil, nil },
		"empty agent":                     func(r *row) { r.agentID = "" },
		"facts that are not an object":    func(r *row) { r.facts = `["caller_number"]` },
		"halted without a step":           func(r *row) { r.state, r.haltStep, r.transcript, r.endedAt = "halted", nil, nil, nil },
		"halted with an empty step":       func(r *row) { r.state, r.haltStep, r.transcript, r.endedAt = "halted", "", nil, nil },
		"active with a halt step":         func(r *row) { r.state, r.haltReason, r.transcript, r.endedAt = "active", nil, nil, nil },
		"active with a halt reason":       func(r *row) { r.state, r.haltStep, r.transcript, r.endedAt = "active", nil, nil, nil },
		"ended without an end":            func(r *row) { r.endedAt = nil },
		"halted with an end":              func(r *row) { r.state, r.transcript = "halted", nil },
		"a transcript before the end":     func(r *row) { r.state, r.endedAt = "halted", nil },
		"a resolution without a resolver": func(r *row) { r.resolvedBy = nil },
		"an empty resolver":               func(r *row) { r.resolvedBy = "" },
	}

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open, raw := b.setup(t)
			require.NoError(t, open().Migrate(t.Context()))

			exec := func(id string, r row) error {
				_, err := raw.ExecContext(t.Context(), insert, id, r.agentID, r.state, r.facts, r.haltStep,
					r.haltReason, r.resolvedBy, r.resolveReason, r.transcript, r.endedAt)
				return err
			}

			// The control rows prove the statement is sound, so each
			// refusal below is the constraint's doing.
			require.NoError(t, exec("ses_good", good))
			require.NoError(t, exec("ses_active", row{agentID: "agent_1", state: "active", facts: `{}`}))
			for name, mutate := range refused {
				r := good
				mutate(&r)
				require.Error(t, exec(name, r), name)
			}
		})
	}
}
