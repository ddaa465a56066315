package tools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func compensationOf(t *testing.T, yaml string) *Compensation {
	t.Helper()
	cat, err := Load([]byte(yaml))
	require.NoError(t, err)
	wo, ok := cat.Tool("create_work_order")
	require.True(t, ok)
	return wo.Compensation
}

func TestCompensationVersionCoversWhatTheUndoRuns(t *testing.T) {
	t.Parallel()
	demo := string(DemoCatalogYAML)
	base := compensationOf(t, demo)
	require.Regexp(t, `^1\+[0-9a-f]{16}$`, base.VersionString())
	require.True(t, base.SameVersion(base.VersionString()))
	require.True(t, base.SameVersion("1"), "entries recorded before the digest compare on the declared version")
	require.False(t, base.SameVersion("2"))

	cosmetic := strings.Replace(demo, "Undoes create_work_order by cancelling the work order.", "Cancels the work order create_work_order made.", 1)
	cosmetic = strings.Replace(cosmetic, "      path: \"/v1/work_orders/{{pathescape .Args.work_order_id}}/cancel\"",
		"      # the sandbox's cancel endpoint\n      path: \"/v1/work_orders/{{pathescape .Args.work_order_id}}/cancel\"", 1)
	require.NotEqual(t, demo, cosmetic)
	require.Equal(t, base.VersionString(), compensationOf(t, cosmetic).VersionString(), "descriptions and comments change no undo")

	for name, edit := range map[string][2]string{
		"connector":    {"/cancel\"", "/cancel?reason=rollback\""},
		"args":         {"work_order_id: \"{{.Receipt.ID}}\"", "work_order_id: \"{{.Args.tenant_id}}\""},
		"declared":     {"  - name: cancel_work_order\n", "  - name: cancel_work_order\n    version: 2\n"},
		"input_schema": {"pattern: \"^[A-Za-z0-9_-]{1,64}$\"\n          description: the ID create_work_order returned", "pattern: \"^[A-Za-z0-9_-]{1,32}$\"\n          description: the ID create_work_order returned"},
	} {
		edited := strings.Replace(demo, edit[0], edit[1], 1)
		require.NotEqual(t, demo, edited, name)
		got := compensationOf(t, edited)
		require.NotEqual(t, base.VersionString(), got.VersionString(), name)
		require.False(t, got.SameVersion(base.VersionString()), name)
	}
}
