package console

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/maestro-run/maestro/tools"
)

// argValue is an argument's value as an approver reads it: as sent and,
// for a field the catalog declares money, as the amount it stands for.
type argValue struct {
	Raw string
	// Money is the amount in the field's currency ("$125.00" for
	// amount_cents 12500); empty for any other argument.
	Money string
}

// argRow is one argument as a table row.
type argRow struct {
	Name string
	argValue
}

// moneyFields are the money fields of tool as the catalog in use declares
// them; nil for a tool it no longer has.
func (c *Console) moneyFields(tool string) map[string]tools.Currency {
	t, ok := c.cfg.Catalog.Load().Tool(tool)
	if !ok {
		return nil
	}
	return t.MoneyFields
}

// argRows lays out a call's arguments as rows in name order, each money
// field with its amount; anything that is not an object is one row of
// pretty JSON.
func (c *Console) argRows(tool string, raw json.RawMessage) []argRow {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return []argRow{{Name: "(arguments)", argValue: argValue{Raw: prettyJSON(raw)}}}
	}
	money := c.moneyFields(tool)
	rows := make([]argRow, 0, len(obj))
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		rows = append(rows, argRow{Name: k, argValue: valueOf(obj[k], money, k)})
	}
	return rows
}

// valueOf shows raw, the value of argument name, with its amount when
// money declares the argument one and it is a whole number.
func valueOf(raw json.RawMessage, money map[string]tools.Currency, name string) argValue {
	v := argValue{Raw: scalar(raw)}
	if cur, ok := money[name]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil {
			v.Money = cur.Format(n)
		}
	}
	return v
}
