// Package mcptest drives maestro's MCP endpoint as a client does, for
// tests.
package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Headers adds fixed headers to every request, as an MCP client configured
// with a platform's headers does.
type Headers struct {
	Header http.Header
	// Next sends the request. Optional: default http.DefaultTransport.
	Next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t Headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.Header {
		r.Header[k] = v
	}
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// Connect initializes an MCP session at endpoint with key as the bearer
// token, using the go-sdk's client without its standalone stream: a test
// opens that itself with OpenStream, to know when it is held.
func Connect(ctx context.Context, endpoint, key string) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "maestro-test", Version: "1"}, nil)
	return client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: Headers{Header: http.Header{"Authorization": {"Bearer " + key}}}},
		DisableStandaloneSSE: true,
	}, nil)
}

// OpenStream opens a session's standalone SSE stream and returns once the
// server has started it, with the response: its body stays open until the
// server ends the stream or ctx ends.
func OpenStream(ctx context.Context, endpoint, key, sessionID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sessionID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("error opening the stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return nil, fmt.Errorf("the stream was not opened: %s %s: %s", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	// The server writes a comment as soon as it holds the stream.
	if _, err := resp.Body.Read(make([]byte, 1)); err != nil {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("error reading the stream's first bytes: %w", err)
	}
	return resp, nil
}

// StreamEnded reads a stream to its end and reports nil if the server
// ended it, or the error that ended it otherwise (ctx's, say).
func StreamEnded(body io.ReadCloser) error {
	defer func() { _ = body.Close() }()
	_, err := io.Copy(io.Discard, body)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("the connection was cut rather than the stream ended: %w", err)
	}
	return err
}

// Observation is the observation a tool result carries as structured
// content.
func Observation(t testing.TB, res *sdk.CallToolResult) mt.Observation {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var obs mt.Observation
	require.NoError(t, json.Unmarshal(raw, &obs))
	return obs
}
