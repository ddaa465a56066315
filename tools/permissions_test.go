package tools_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/tools"
)

// operatorWith adds an operator holding roles to the minimal catalog.
func operatorWith(d catalogDoc, id string, roles ...any) {
	d["operators"] = append(d["operators"].([]any), map[string]any{
		"id": id, "api_key_sha256": tools.HashKey(id + "-key"), "roles": roles,
	})
}

func TestPermissionsDefaultToLeastPrivilege(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	operatorWith(d, "clerk", "ops")
	operatorWith(d, "root", "admin")
	c := loadDoc(t, d)
	boss, _ := c.Operator("boss")
	clerk, _ := c.Operator("clerk")
	root, _ := c.Operator("root")
	want := map[tools.Permission][]*tools.Operator{
		tools.PermDecodePayloads:        {root},
		tools.PermReloadCatalog:         {root},
		tools.PermRunCanary:             {clerk, root},
		tools.PermSettleReconciliations: {boss, root},
		tools.PermVouchFacts:            {boss, clerk},
	}
	for perm, holders := range want {
		for _, op := range []*tools.Operator{boss, clerk, root} {
			require.Equal(t, contains(holders, op), c.Permits(op, perm), "%s %s", op.ID, perm)
		}
	}
	require.False(t, c.Permits(nil, tools.PermRunCanary), "nobody signed in holds nothing")
	require.Equal(t, []string{"admin", "manager"}, c.PermissionRoles(tools.PermSettleReconciliations))
}

func TestPermissionsSectionOverridesOnlyWhatItNames(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	operatorWith(d, "clerk", "ops")
	d["permissions"] = map[string]any{"decode_payloads": []any{"ops"}, "vouch_facts": []any{"manager"}}
	c := loadDoc(t, d)
	boss, _ := c.Operator("boss")
	clerk, _ := c.Operator("clerk")
	require.True(t, c.Permits(clerk, tools.PermDecodePayloads))
	require.False(t, c.Permits(boss, tools.PermDecodePayloads))
	require.False(t, c.Permits(clerk, tools.PermVouchFacts))
	require.True(t, c.Permits(boss, tools.PermVouchFacts))
	require.Equal(t, []string{"admin"}, c.PermissionRoles(tools.PermReloadCatalog), "left out: the default")
}

func TestTheDemoOperatorMayDoEverything(t *testing.T) {
	t.Parallel()
	demo, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	for _, op := range demo.Operators() {
		for _, perm := range []tools.Permission{tools.PermDecodePayloads, tools.PermReloadCatalog, tools.PermRunCanary,
			tools.PermSettleReconciliations, tools.PermVouchFacts} {
			require.True(t, demo.Permits(op, perm), "%s %s", op.ID, perm)
		}
	}
}

func TestOnlyTheApproverOrAVouchRoleMayVouchForARulesFacts(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	operatorWith(d, "clerk", "ops")
	operatorWith(d, "desk", "frontdesk")
	c := loadDoc(t, d)
	notify, _ := c.Tool("notify")
	require.True(t, c.MayVouchFor(notify, "boss"), "the approver role")
	require.False(t, c.MayVouchFor(notify, "clerk"))
	require.False(t, c.MayVouchFor(notify, "nobody"), "an operator the catalog does not have")

	d.sub("notify", "approval")["vouch_roles"] = []any{"frontdesk"}
	raw, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)
	c, err = tools.Load(raw)
	require.NoError(t, err)
	notify, _ = c.Tool("notify")
	require.Equal(t, []string{"frontdesk"}, notify.Approval.VouchRoles)
	require.True(t, c.MayVouchFor(notify, "desk"), "a vouch role")
	require.True(t, c.MayVouchFor(notify, "boss"))
	require.False(t, c.MayVouchFor(notify, "clerk"))
}

func contains(ops []*tools.Operator, op *tools.Operator) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}
