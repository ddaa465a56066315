package main

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/mcp"
	"github.com/maestro-run/maestro/internal/mcp/mcptest"
	"github.com/maestro-run/maestro/internal/standin/fault"
	"github.com/maestro-run/maestro/internal/syncbuf"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// TestSIGTERMWithAnMCPClientConnected: a client holding its MCP stream
// no longer holds the drain to its deadline. On SIGTERM the stream ends
// at once, a call in flight (held at the provider) still finishes with
// its answer, and maestro exits 0 well inside the drain window.
func TestSIGTERMWithAnMCPClientConnected(t *testing.T) {
	t.Parallel()
	const drain = 30 * time.Second
	cmd, stderr, banner := startDev(t, "--drain-timeout", drain.String())
	endpoint := bannerURL(t, banner, `mcp:\s+(\S+)`)
	faults := bannerURL(t, banner, `sandbox (\S+)`) + fault.AdminPath
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// The tenant lookup is held at the sandbox until the test lets it go.
	standinAdmin(t, ctx, http.MethodPost, faults, `{"action":"hang","method":"GET","path":"/v1/tenants/t_100"}`)
	cs, err := mcptest.Connect(ctx, endpoint, tools.DemoAgentKey)
	require.NoError(t, err)
	defer func() { _ = cs.Close() }()
	stream, err := mcptest.OpenStream(ctx, endpoint, tools.DemoAgentKey, cs.ID())
	require.NoError(t, err)
	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	called := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lookup_tenant",
			Arguments: map[string]any{"tenant_id": "t_100", mcp.SessionArg: "call-drain"}})
		called <- answer{res, err}
	}()
	require.Eventually(t, func() bool {
		return standinAdmin(t, ctx, http.MethodGet, faults, "").Held == 1
	}, time.Minute, 20*time.Millisecond, "the call reaches the sandbox")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	stopping := time.Now()
	require.NoError(t, mcptest.StreamEnded(stream.Body), "the stream ends while the call is still held:\n%s", stderr.String())
	select {
	case a := <-called:
		t.Fatalf("the call ended while the sandbox held it: %+v", a)
	default:
	}

	standinAdmin(t, ctx, http.MethodPost, faults+"/release", "")
	a := <-called
	require.NoError(t, a.err)
	require.False(t, a.res.IsError, "%+v", a.res.Content)
	obs := mcptest.Observation(t, a.res)
	require.Equal(t, mt.StatusSuccess, obs.Status, obs.Summary)

	require.NoError(t, cmd.Wait(), "maestro exits 0:\n%s", stderr.String())
	require.Less(t, time.Since(stopping), drain/2, "well inside the drain window")
	require.NotContains(t, stderr.String(), "error draining")
}

// bannerURL is the URL the dev banner prints where pattern's group is.
func bannerURL(t *testing.T, banner *syncbuf.Buffer, pattern string) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	var url string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(banner.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, time.Minute, 20*time.Millisecond, "the banner names %s:\n%s", pattern, banner)
	return url
}

// standinAdmin calls a stand-in's fault controls and reads their state.
func standinAdmin(t *testing.T, ctx context.Context, method, url, body string) fault.State {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	require.Less(t, resp.StatusCode, 300, "%s %s", method, url)
	var st fault.State
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	return st
}
