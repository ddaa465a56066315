package server_test

import (
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/mcp"
	"github.com/maestro-run/maestro/internal/mcp/mcptest"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// shortWrite is a server write timeout far below the provider's delay:
// every route below waits longer than it, on a budget of its own.
const shortWrite = time.Second

// providerDelay holds each provider call past the write timeout but well
// inside the waits' budgets.
const providerDelay = 3 * time.Second

// Each route that waits on an invocation answers after the server's write
// timeout when its own budget is longer: the outcome, with its receipt,
// reaches the caller instead of a connection closed on it after the effect
// happened.
func TestWaitingRoutesOutlastTheWriteTimeout(t *testing.T) {
	t.Parallel()
	short := func(o *options) { o.timeouts.Write = shortWrite }

	t.Run("invocations", func(t *testing.T) {
		t.Parallel()
		e := setup(t, short)
		e.standins.Sandbox.Faults().DelayNext(1, providerDelay)
		start := time.Now()
		resp, err := e.agent.Invoke(e.ctx, invokeRequest(e.session, "create_work_order", e.key("wo"), workOrderArgs))
		require.NoError(t, err)
		require.Greater(t, time.Since(start), shortWrite)
		require.False(t, resp.Pending, "%+v", resp.Observation)
		require.Equal(t, mt.StatusSuccess, resp.Observation.Status, resp.Observation.Summary)
		require.NotNil(t, resp.Observation.Receipt)
	})

	t.Run("mcp", func(t *testing.T) {
		t.Parallel()
		e := setup(t, short)
		e.standins.Sandbox.Faults().DelayNext(1, providerDelay)
		cs := e.mcpSession(http.Header{mcp.SessionHeader: {e.session}})
		start := time.Now()
		res, err := cs.CallTool(e.ctx, &sdk.CallToolParams{Name: "create_work_order", Arguments: map[string]any{
			"tenant_id": "t_100", "category": "hvac", "description": "no heat", "priority": "urgent"}})
		require.NoError(t, err)
		require.Greater(t, time.Since(start), shortWrite)
		obs := mcptest.Observation(t, res)
		require.Equal(t, mt.StatusSuccess, obs.Status, obs.Summary)
		require.NotNil(t, obs.Receipt)
	})

	// A budget that runs out past the write timeout is answered with the
	// pending wording, never a closed connection.
	t.Run("budget runs out", func(t *testing.T) {
		t.Parallel()
		e := setup(t, withPlatforms("3s"), short)
		e.standins.Twilio.Faults().DelayNext(1, 4*providerDelay)
		start := time.Now()
		got := drivers[0].call(t, e, time.Now(), "call_1", "send_sms", smsToCaller)
		e.standins.Twilio.Faults().Release()
		require.Greater(t, time.Since(start), shortWrite)
		require.False(t, got.err, got.text)
		require.Contains(t, got.text, "still working on that")
	})

	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, withPlatforms(roomyBudget), short)
			e.standins.Twilio.Faults().DelayNext(1, providerDelay)
			start := time.Now()
			got := d.call(t, e, time.Now(), "call_1", "send_sms", smsToCaller)
			require.Greater(t, time.Since(start), shortWrite)
			require.False(t, got.err, got.text)
			require.Contains(t, got.text, "I've sent the text")
			require.Equal(t, 1, e.standins.Twilio.CountMessages())
		})
	}
}
