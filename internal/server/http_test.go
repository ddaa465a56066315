package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// TestOversizedBodyGetsAReadable413 sends 5 MiB, with and without a
// declared length, the way a simple client does: the whole request first,
// then the answer. The client must read the 413 observation, not a reset.
func TestOversizedBodyGetsAReadable413(t *testing.T) {
	t.Parallel()
	e := setup(t)
	big := `{"tool":"lookup_tenant","args":{"tenant_id":"` + strings.Repeat("1", 5<<20) + `"}}`
	head := "POST /v1/invocations HTTP/1.1\r\nHost: maestro\r\nAuthorization: Bearer " + tools.DemoAgentKey +
		"\r\nContent-Type: application/json\r\n"

	for _, tt := range []struct {
		name    string
		request string
	}{
		{"DeclaredLength", head + "Content-Length: " + strconv.Itoa(len(big)) + "\r\n\r\n" + big},
		{"Chunked", head + "Transfer-Encoding: chunked\r\n\r\n" + chunked(big, 32<<10)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
			_, err = io.Copy(conn, strings.NewReader(tt.request))
			require.NoError(t, err, "the server reads the whole request rather than resetting the connection")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err, "the client reads an answer, not a reset")
			defer resp.Body.Close()
			require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
			var body struct {
				Observation mt.Observation `json:"observation"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
			require.Equal(t, mt.CodePayloadTooLarge, body.Observation.Code)
			require.Equal(t, mt.StatusError, body.Observation.Status)
			require.NotNil(t, body.Observation.NextActions)
			require.NotEmpty(t, body.Observation.NextActions.RootCause)
		})
	}
	e.requireNothingRan()
}

// chunked encodes s in HTTP/1.1 chunks of size n.
func chunked(s string, n int) string {
	var b strings.Builder
	for len(s) > 0 {
		c := s[:min(n, len(s))]
		s = s[len(c):]
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(c), c)
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

// TestSilentClientsAreCutOff holds connections open the way a slow or
// stalled client does; the server must give up on them.
func TestSilentClientsAreCutOff(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *options) {
		o.timeouts.ReadHeader = 300 * time.Millisecond
		o.timeouts.Read = 500 * time.Millisecond
		o.timeouts.Idle = 500 * time.Millisecond
	})
	addr := strings.TrimPrefix(e.url, "http://")

	// closedWithin reads until the server ends the connection; the
	// deadline only stops a server that never does from hanging the test.
	closedWithin := func(t *testing.T, conn net.Conn) []byte {
		t.Helper()
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		got, err := io.ReadAll(conn)
		var netErr net.Error
		require.False(t, errors.As(err, &netErr) && netErr.Timeout(), "the server kept the connection open")
		return got
	}

	t.Run("HeadersNeverFinish", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.Write([]byte("POST /v1/invocations HTTP/1.1\r\nHost: maestro\r\n"))
		require.NoError(t, err)
		closedWithin(t, conn)
	})
	t.Run("BodyNeverFinishes", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.Write([]byte("POST /v1/invocations HTTP/1.1\r\nHost: maestro\r\nAuthorization: Bearer " + tools.DemoAgentKey +
			"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"tool\":"))
		require.NoError(t, err)
		got := closedWithin(t, conn)
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(got)), nil)
		require.NoError(t, err, "the stalled sender is told why: %q", got)
		require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	})
	t.Run("IdleKeepAlive", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: maestro\r\n\r\n"))
		require.NoError(t, err)
		got := closedWithin(t, conn)
		require.Contains(t, string(got), "200 OK", "the request was answered, then the idle connection closed")
	})
}
