package server

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

// The drain window left unset covers the longest platform answer of a
// process that serves the API; one set shorter refuses the catalog, naming
// the field, and a worker, which answers no platform, is held to neither.
func TestDrainWindowCoversTheLongestBudget(t *testing.T) {
	t.Parallel()
	cat, err := tools.Load([]byte(strings.Replace(string(tools.DemoCatalogYAML), "    on_failure: none\n",
		"    on_failure: none\n    platform:\n      kind: elevenlabs\n      secret_env: EL_SECRET\n      async_tools: true\n      async_budget: 100s\n", 1)))
	require.NoError(t, err)

	require.Equal(t, 105*time.Second, drainWindow(Config{Role: RoleAll}, cat))
	require.Equal(t, 105*time.Second, drainWindow(Config{Role: RoleAPI}, cat))
	require.Equal(t, defaultDrain, drainWindow(Config{Role: RoleWorker}, cat))
	require.Equal(t, 20*time.Second, drainWindow(Config{Role: RoleAll, DrainTimeout: 20 * time.Second}, cat))
	demo, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	require.Equal(t, defaultDrain, drainWindow(Config{Role: RoleAll}, demo))

	require.NoError(t, checkBudgets(Config{Role: RoleAll, DrainTimeout: 105 * time.Second}, cat))
	require.NoError(t, checkBudgets(Config{Role: RoleWorker, DrainTimeout: 20 * time.Second}, cat))
	err = checkBudgets(Config{Role: RoleAPI, DrainTimeout: 20 * time.Second}, cat)
	require.ErrorContains(t, err, `agents[0] "voice-agent": platform.async_budget: 1m40s is answered up to 1m45s after a call arrives, but --drain-timeout (MAESTRO_DRAIN_TIMEOUT) is 20s`)
}
