package tools_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

// An agent's caps default to documented values, and a catalog may set its
// own.
func TestAgentCaps(t *testing.T) {
	t.Parallel()
	d := minimalDoc(t)
	c, err := loadNotifyDoc(t, d)
	require.NoError(t, err)
	agent, ok := c.Agent("agent")
	require.True(t, ok)
	require.Equal(t, tools.DefaultMaxOpenApprovals, agent.MaxOpenApprovals)
	require.Equal(t, tools.DefaultMaxLiveSessions, agent.MaxLiveSessions)

	d.agent()["max_open_approvals"] = 500
	d.agent()["max_live_sessions"] = 3
	c, err = loadNotifyDoc(t, d)
	require.NoError(t, err)
	agent, _ = c.Agent("agent")
	require.Equal(t, 500, agent.MaxOpenApprovals)
	require.Equal(t, 3, agent.MaxLiveSessions)
}

// A throughput harness lifts every agent's caps to the largest allowed.
func TestLiftingAgentCaps(t *testing.T) {
	t.Parallel()
	doc, err := tools.LiftingAgentCaps(tools.DemoCatalogYAML)
	require.NoError(t, err)
	c, err := tools.Load(doc)
	require.NoError(t, err)
	agent, ok := c.Agent("voice-agent")
	require.True(t, ok)
	require.Equal(t, 100_000, agent.MaxOpenApprovals)
	require.Equal(t, 100_000, agent.MaxLiveSessions)

	_, err = tools.LiftingAgentCaps([]byte("a: [\n"))
	require.ErrorContains(t, err, "error reading the catalog")
}

// A harness proving at-most-once holds every ambiguous answer for a human.
func TestHoldingOnUnknown(t *testing.T) {
	t.Parallel()
	before, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	deliver, ok := before.Tool("deliver_message")
	require.True(t, ok)
	require.Equal(t, tools.OnUnknownResend, deliver.OnUnknown, "the demo catalog opts into resend")

	doc, err := tools.HoldingOnUnknown(tools.DemoCatalogYAML)
	require.NoError(t, err)
	c, err := tools.Load(doc)
	require.NoError(t, err)
	for _, tool := range c.Tools() {
		require.NotEqual(t, tools.OnUnknownResend, tool.OnUnknown, tool.Name)
	}

	_, err = tools.HoldingOnUnknown([]byte("a: [\n"))
	require.ErrorContains(t, err, "error reading the catalog")
}
