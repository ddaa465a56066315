package tools_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

// TestDemoKeyHoldersNamesWhoHoldsAPublishedKey: the demo catalog's agent
// and operator hold the published keys; once replaced, nobody does.
func TestDemoKeyHoldersNamesWhoHoldsAPublishedKey(t *testing.T) {
	t.Parallel()
	demo, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	require.Equal(t, []string{`agent "voice-agent"`, `operator "demo-manager"`}, demo.DemoKeyHolders())

	doc, err := tools.ReplacingDemoKeys(tools.DemoCatalogYAML, "agent-key", "ops-key")
	require.NoError(t, err)
	rekeyed, err := tools.Load(doc)
	require.NoError(t, err)
	require.Empty(t, rekeyed.DemoKeyHolders())
	agent, ok := rekeyed.AgentByKey("agent-key")
	require.True(t, ok)
	require.Equal(t, "voice-agent", agent.ID)
	op, ok := rekeyed.OperatorByKey("ops-key")
	require.True(t, ok)
	require.Equal(t, "demo-manager", op.ID)
	_, ok = rekeyed.AgentByKey(tools.DemoAgentKey)
	require.False(t, ok, "the demo key no longer authenticates")
}

// TestReplacingDemoKeysRefusesACatalogWithoutThem: a harness whose catalog
// lost the demo hashes hears so, rather than running with keys it does
// not know.
func TestReplacingDemoKeysRefusesACatalogWithoutThem(t *testing.T) {
	t.Parallel()
	doc, err := tools.ReplacingDemoKeys(tools.DemoCatalogYAML, "agent-key", "ops-key")
	require.NoError(t, err)
	_, err = tools.ReplacingDemoKeys(doc, "other-agent-key", "other-ops-key")
	require.ErrorContains(t, err, "the catalog does not hold both demo key hashes")
}
