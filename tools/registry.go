package tools

import "github.com/maestro-run/maestro/maestrotype"

// RegistryRow is one tool as mirrored into the database, where CHECK
// constraints hold the classification to the same rules as the loader and
// the audit reads it next to the approval records.
type RegistryRow struct {
	Name             string
	Effect           maestrotype.Effect
	Delivery         maestrotype.Delivery
	Reversibility    maestrotype.Reversibility
	CompensationTool string // empty unless compensable
	ApproverRole     string // empty unless gated by a human
	ConnectorKind    maestrotype.ConnectorKind
	Owner            string
	CatalogHash      string
}

// RegistryRows returns one row per tool, sorted by name.
func (c *Catalog) RegistryRows() []RegistryRow {
	rows := make([]RegistryRow, 0, len(c.sorted))
	for _, t := range c.sorted {
		row := RegistryRow{
			Name:          t.Name,
			Effect:        t.Effect,
			Delivery:      t.Delivery,
			Reversibility: t.Reversibility,
			ConnectorKind: t.Connector.Kind,
			Owner:         t.Owner,
			CatalogHash:   c.hash,
		}
		if t.Compensation != nil {
			row.CompensationTool = t.Compensation.Tool
		}
		if t.Approval != nil {
			row.ApproverRole = t.Approval.ApproverRole
		}
		rows = append(rows, row)
	}
	return rows
}
