package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/mcp"
	"github.com/maestro-run/maestro/internal/syncbuf"
	"github.com/maestro-run/maestro/internal/throttle"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// manualClock is a clock a test moves by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fromAddress is an HTTP client whose connections come from local, one
// of the loopback addresses: another client address to the server.
func fromAddress(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: d.DialContext}}
}

// getWithKey is GET path with key as the bearer, from client.
func getWithKey(t *testing.T, ctx context.Context, client *http.Client, u, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp
}

// mcpList is an MCP tools/list with key as the bearer, from client.
func mcpList(t *testing.T, ctx context.Context, client *http.Client, base, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+mcp.Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp
}

func TestWrongKeysAreThrottledPerAddress(t *testing.T) {
	t.Parallel()
	clk := &manualClock{now: time.Now()}
	logs := &syncbuf.Buffer{}
	e := setup(t, func(o *options) {
		o.logs = logs
		o.throttle = throttle.Config{Failures: 10, Window: time.Minute, Backoff: 30 * time.Second, MaxBackoff: 10 * time.Minute, Now: clk.Now}
	})
	attacker, other := fromAddress("127.0.0.1"), fromAddress("127.0.0.2")

	// 300 wrong keys from one address: the first ten are checked (401),
	// the rest refused unchecked (429, Retry-After).
	codes := map[int]int{}
	var retryAfter string
	for i := range 300 {
		resp := getWithKey(t, e.ctx, attacker, e.url+"/v1/tools", fmt.Sprintf("guess-%d", i))
		codes[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests {
			retryAfter = resp.Header.Get("Retry-After")
		}
	}
	require.Equal(t, map[int]int{http.StatusUnauthorized: 10, http.StatusTooManyRequests: 290}, codes)
	require.Equal(t, "30", retryAfter)
	require.Equal(t, 1, strings.Count(logs.String(), "client throttled after failed credential checks"), "one warning for the burst")

	// A correct key from another address is not held up: API, operator
	// routes, MCP and console sign-in.
	agent := apiclient.New(e.url, tools.DemoAgentKey, apiclient.Options{HTTPClient: other})
	_, err := agent.Tools(e.ctx)
	require.NoError(t, err)
	ops := apiclient.New(e.url, tools.DemoOpsKey, apiclient.Options{HTTPClient: other})
	_, err = ops.Approvals(e.ctx, "pending")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, mcpList(t, e.ctx, other, e.url, tools.DemoAgentKey).StatusCode)
	console := e.visitor()
	console.c.Transport = other.Transport
	status, body := console.get("/console/signin")
	require.Equal(t, http.StatusOK, status)
	status, body = console.post("/console/signin", url.Values{"key": {tools.DemoOpsKey}, "csrf": {csrfIn(body)}})
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "Approval queue")

	// The throttled address is refused everywhere, even with a correct
	// key, which is not looked at.
	thrown := apiclient.New(e.url, tools.DemoAgentKey, apiclient.Options{HTTPClient: openAPIClientFrom(t, attacker)})
	_, err = thrown.Tools(e.ctx)
	require.True(t, apiclient.IsRefusal(err, mt.CodeTooManyAttempts), "%v", err)
	_, err = apiclient.New(e.url, tools.DemoOpsKey, apiclient.Options{HTTPClient: openAPIClientFrom(t, attacker)}).Session(e.ctx, e.session)
	require.True(t, apiclient.IsRefusal(err, mt.CodeTooManyAttempts), "%v", err)
	resp := mcpList(t, e.ctx, attacker, e.url, tools.DemoAgentKey)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	signin := e.visitor()
	signin.c.Transport = attacker.Transport
	_, body = signin.get("/console/signin")
	status, body = signin.post("/console/signin", url.Values{"key": {tools.DemoOpsKey}, "csrf": {csrfIn(body)}})
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Contains(t, textOf(body), "Too many sign-ins with a wrong key came from your address")

	// After the backoff the address may try again; its correct key works.
	clk.advance(30 * time.Second)
	_, err = thrown.Tools(e.ctx)
	require.NoError(t, err)

	// The window's failures still count: the next wrong sign-in from the
	// address throttles it again, with a fresh backoff, and the console
	// shares the API's budget.
	_, body = signin.get("/console/signin")
	status, _ = signin.post("/console/signin", url.Values{"key": {"not-the-key"}, "csrf": {csrfIn(body)}})
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, http.StatusTooManyRequests, getWithKey(t, e.ctx, attacker, e.url+"/v1/tools", tools.DemoAgentKey).StatusCode)
	require.Equal(t, 2, strings.Count(logs.String(), "client throttled after failed credential checks"))

	// Requests without any key guess nothing and are not counted.
	clk.advance(time.Hour)
	for range 50 {
		req, err := http.NewRequestWithContext(e.ctx, http.MethodGet, e.url+"/v1/tools", nil)
		require.NoError(t, err)
		resp, err := other.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}
	_, err = agent.Tools(e.ctx)
	require.NoError(t, err)
}

// openAPIClientFrom is openAPIClient over client's connections.
func openAPIClientFrom(t *testing.T, client *http.Client) *http.Client {
	c := openAPIClient(t)
	c.Transport.(*openAPIValidator).next = client.Transport
	return c
}
