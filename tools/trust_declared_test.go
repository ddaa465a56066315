package tools_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

// A harness's catalog lets writes run while an approval is pending.
func TestAllowingWritesWhileAwaiting(t *testing.T) {
	t.Parallel()
	strict, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	agent, ok := strict.Agent("voice-agent")
	require.True(t, ok)
	require.Equal(t, tools.AwaitingApprovalStrict, agent.WhileAwaitingApproval, "the demo catalog is strict")

	doc, err := tools.AllowingWritesWhileAwaiting(tools.DemoCatalogYAML)
	require.NoError(t, err)
	relaxed, err := tools.Load(doc)
	require.NoError(t, err)
	agent, _ = relaxed.Agent("voice-agent")
	require.Equal(t, tools.AwaitingApprovalAllowWrites, agent.WhileAwaitingApproval)

	_, err = tools.AllowingWritesWhileAwaiting([]byte("a: [\n"))
	require.ErrorContains(t, err, "error reading the catalog")
}
