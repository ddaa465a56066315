package ledger_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

// TestToolRegistryConstraints inserts rows with raw SQL, going around the
// store's Go code, to prove the table itself refuses a bad class.
func TestToolRegistryConstraints(t *testing.T) {
	t.Parallel()

	const insert = `INSERT INTO tool_registry (name, effect, delivery, reversibility, compensation_tool,
		approver_role, connector_kind, owner, catalog_hash) VALUES ($1, $2, $3, $4, $5, $6, 'http', 'team', 'h')`

	type row struct {
		effect, delivery, reversibility string
		compensationTool, approverRole  any
	}
	good := row{"write", "real-sync", "compensable", "undo.it", nil}

	refused := map[string]func(r *row){
		"unknown effect":                func(r *row) { r.effect = "delete" },
		"unknown delivery":              func(r *row) { r.delivery = "eventually" },
		"unknown reversibility":         func(r *row) { r.reversibility = "maybe" },
		"compensable without tool":      func(r *row) { r.compensationTool = nil },
		"compensable with empty tool":   func(r *row) { r.compensationTool = "" },
		"money without approver":        func(r *row) { r.effect, r.reversibility = "money", "irreversible" },
		"read that is not readonly":     func(r *row) { r.effect, r.reversibility, r.compensationTool = "read", "none", nil },
		"money with an empty approver":  func(r *row) { r.effect, r.approverRole = "money", "" },
		"write with a missing delivery": func(r *row) { r.delivery = "" },
	}

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open, raw := b.setup(t)
			require.NoError(t, open().Migrate(t.Context()))

			exec := func(name string, r row) error {
				_, err := raw.ExecContext(t.Context(), insert, name, r.effect, r.delivery, r.reversibility,
					r.compensationTool, r.approverRole)
				return err
			}

			// The control row proves the statement itself is sound, so each
			// refusal below is the constraint's doing.
			require.NoError(t, exec("good", good))
			for name, mutate := range refused {
				r := good
				mutate(&r)
				require.Error(t, exec(name, r), name)
			}
		})
	}
}

// TestToolRegistryHistoryIsAppendOnly goes around the store with raw SQL
// to prove the database itself refuses to rewrite a past classification,
// which the audit judges past effects by.
func TestToolRegistryHistoryIsAppendOnly(t *testing.T) {
	t.Parallel()

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open, raw := b.setup(t)
			s := open()
			ctx := t.Context()
			require.NoError(t, s.Migrate(ctx))
			require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{{
				Name: "payments.refund", Effect: maestrotype.EffectMoney, Delivery: maestrotype.DeliveryRealSync,
				Reversibility: maestrotype.ReversibilityIrreversible, ApproverRole: "finance",
				ConnectorKind: "http", Owner: "payments", CatalogHash: "h1",
			}}))

			requireAppendOnly(t, b, raw, "tool_registry_versions", "effect = 'write'")

			history, err := s.ToolRegistryHistory(ctx, "payments.refund")
			require.NoError(t, err)
			require.Len(t, history, 1)
			require.Equal(t, maestrotype.EffectMoney, history[0].Effect)
		})
	}
}
