package tools_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func TestRoute(t *testing.T) {
	t.Parallel()
	const (
		read, write, money              = maestrotype.EffectRead, maestrotype.EffectWrite, maestrotype.EffectMoney
		readonly, realSync, deferred    = maestrotype.DeliveryReadonly, maestrotype.DeliveryRealSync, maestrotype.DeliveryRecordDeferred
		none, compensable, irreversible = maestrotype.ReversibilityNone, maestrotype.ReversibilityCompensable, maestrotype.ReversibilityIrreversible
	)
	cases := []struct {
		effect        maestrotype.Effect
		delivery      maestrotype.Delivery
		reversibility maestrotype.Reversibility
		want          maestrotype.Route
	}{
		{read, readonly, none, maestrotype.RouteRead},
		{write, realSync, compensable, maestrotype.RouteCompensable},
		{write, realSync, irreversible, maestrotype.RouteGated},
		{write, deferred, irreversible, maestrotype.RouteDeferred},
		{write, deferred, compensable, maestrotype.RouteDeferred},
		{money, realSync, compensable, maestrotype.RouteGated},
		{money, realSync, irreversible, maestrotype.RouteGated},
		// Rows the loader refuses still fail closed when built by hand.
		{money, deferred, irreversible, maestrotype.RouteGated},
		{read, realSync, none, maestrotype.RouteGated},
		{write, realSync, none, maestrotype.RouteGated},
		{write, readonly, compensable, maestrotype.RouteGated},
		{"", "", "", maestrotype.RouteGated},
		{"delete", realSync, compensable, maestrotype.RouteGated},
	}
	for _, tc := range cases {
		tool := &tools.Tool{Effect: tc.effect, Delivery: tc.delivery, Reversibility: tc.reversibility}
		require.Equal(t, tc.want, tool.Route(), "%s/%s/%s", tc.effect, tc.delivery, tc.reversibility)
	}
}

func TestDemoRoutes(t *testing.T) {
	t.Parallel()
	c := demo(t)
	want := map[string]maestrotype.Route{
		"lookup_tenant":          maestrotype.RouteRead,
		"send_sms":               maestrotype.RouteGated,
		"email_property_manager": maestrotype.RouteGated,
		"escalate_to_human":      maestrotype.RouteGated,
		"create_work_order":      maestrotype.RouteCompensable,
		"cancel_work_order":      maestrotype.RouteGated,
		"issue_refund":           maestrotype.RouteGated,
		"cancel_refund":          maestrotype.RouteGated,
		"take_message":           maestrotype.RouteDeferred,
		"delete_tenant_account":  maestrotype.RouteGated,
		"deliver_message":        maestrotype.RouteGated,
		"request_callback":       maestrotype.RouteGated,
	}
	for _, tool := range c.Tools() {
		require.Equal(t, want[tool.Name], tool.Route(), tool.Name)
	}
}
