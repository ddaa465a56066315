package tools_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

func TestCurrencyFormatsMinorUnitsAsPeopleReadMoney(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code  string
		minor int64
		want  string
	}{
		{"USD", 12500, "$125.00"},
		{"USD", 1250000, "$12,500.00"},
		{"USD", 5, "$0.05"},
		{"USD", 0, "$0.00"},
		{"USD", -2500, "-$25.00"},
		{"USD", math.MinInt64, "-$92,233,720,368,547,758.08"},
		{"EUR", 99, "€0.99"},
		{"JPY", 500, "¥500"},
		{"JPY", 1234567, "¥1,234,567"},
		{"CHF", 1500, "CHF 15.00"},
		{"BHD", 1500, "BHD 1.500"},
	}
	for _, tc := range cases {
		c, err := tools.ParseCurrency(tc.code)
		require.NoError(t, err)
		require.Equal(t, tc.code, c.Code())
		require.Equal(t, tc.want, c.Format(tc.minor), "%d %s", tc.minor, tc.code)
	}
	for _, bad := range []string{"usd", "US", "ABC", "dollars", ""} {
		_, err := tools.ParseCurrency(bad)
		require.ErrorContains(t, err, "is not an ISO 4217 currency code", bad)
	}
}

func TestMoneyFieldsLoad(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	d.tool("refund")["money_fields"] = map[string]any{"cents": "USD"}
	c, err := loadNotifyDoc(t, d)
	require.NoError(t, err)
	refund, _ := c.Tool("refund")
	require.Equal(t, "$125.00", refund.MoneyFields["cents"].Format(12500))

	demo, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	issue, _ := demo.Tool("issue_refund")
	require.Equal(t, "USD", issue.MoneyFields["amount_cents"].Code(), "the demo declares its refunds' currency")
}

func TestBadMoneyFieldsAreRefusedNamingRowAndField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		fields map[string]any
		schema map[string]any
		field  string
		says   string
	}{
		{"unknown currency", map[string]any{"cents": "XYZ"}, nil, "money_fields.cents", `"XYZ" is not an ISO 4217 currency code`},
		{"currency in lower case", map[string]any{"cents": "usd"}, nil, "money_fields.cents", `"usd" is not an ISO 4217`},
		{"not an argument", map[string]any{"amount": "USD"}, nil, "money_fields.amount", `"amount" is not an argument of the tool's input_schema`},
		{"not an integer", map[string]any{"cents": "USD"},
			map[string]any{"type": "object", "properties": map[string]any{"cents": map[string]any{"type": "number"}}},
			"money_fields.cents", "must be an argument of type integer counting the currency's minor unit (cents for USD), got type number"},
		{"untyped", map[string]any{"cents": "USD"},
			map[string]any{"type": "object", "properties": map[string]any{"cents": map[string]any{}}},
			"money_fields.cents", "no single type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := minimalDoc(t)
			d.tool("refund")["money_fields"] = tc.fields
			if tc.schema != nil {
				d.tool("refund")["input_schema"] = tc.schema
			}
			_, err := loadNotifyDoc(t, d)
			require.Error(t, err)
			for _, p := range fieldErrors(err) {
				if p.Row == `tools[4] "refund"` && p.Field == tc.field {
					require.Contains(t, p.Problem, tc.says)
					return
				}
			}
			require.Failf(t, "refusal does not name the row and field", "want %s, got:\n%v", tc.field, err)
		})
	}
}
