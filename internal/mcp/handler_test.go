package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/mcp"
	"github.com/maestro-run/maestro/internal/mcp/mcptest"
	"github.com/maestro-run/maestro/tools"
)

func newEndpoint(t *testing.T) (*mcp.Handler, string) {
	t.Helper()
	cat, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	h, err := mcp.New(mcp.Config{Catalog: cat, API: http.NotFoundHandler()})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv.URL + mcp.Path
}

// A refused key is told what it is only when it is a key: an operator's
// key hears that /mcp takes an agent's, and anything else that it is
// invalid, claiming no kind of key it is not.
func TestKeyRefusalSaysOnlyWhatTheKeyIs(t *testing.T) {
	_, endpoint := newEndpoint(t)
	for _, tc := range []struct {
		key, want string
	}{
		{key: "no-such-key", want: "invalid token\n"},
		{key: tools.DemoOpsKey, want: "invalid token: an operator key; /mcp takes an agent key\n"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tc.key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, tc.key)
		require.Equal(t, tc.want, string(body), tc.key)
	}
}

// CloseStreams ends the standalone stream a client holds, refuses a new
// one with a 503 the client retries elsewhere, and leaves the session's
// requests served.
func TestCloseStreamsEndsTheStandaloneStream(t *testing.T) {
	h, endpoint := newEndpoint(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cs, err := mcptest.Connect(ctx, endpoint, tools.DemoAgentKey)
	require.NoError(t, err)
	defer func() { _ = cs.Close() }()
	stream, err := mcptest.OpenStream(ctx, endpoint, tools.DemoAgentKey, cs.ID())
	require.NoError(t, err)

	ended := make(chan error, 1)
	go func() { ended <- mcptest.StreamEnded(stream.Body) }()
	h.CloseStreams()
	require.NoError(t, <-ended, "the server ends the stream")

	_, err = mcptest.OpenStream(ctx, endpoint, tools.DemoAgentKey, cs.ID())
	require.ErrorContains(t, err, "503 Service Unavailable")
	require.ErrorContains(t, err, "maestro is shutting down")

	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err, "the session still answers")
	require.NotEmpty(t, res.Tools)
}
