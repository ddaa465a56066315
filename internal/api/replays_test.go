package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/syncbuf"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

const vapiSecret = "vapi-hmac-secret"

// vapiServer is an API server with one Vapi agent, on st, its signatures
// checked for replay by guard (the ledger when nil). Two such servers on
// one ledger are two API processes behind a load balancer.
func vapiServer(t *testing.T, st ledger.Store, guard ReplayGuard) (*Server, *syncbuf.Buffer) {
	t.Helper()
	agent := "agents:\n  - id: vapi-agent\n    description: Vapi assistant\n    api_key_sha256: " + tools.HashKey("vapi-agent-key") +
		"\n    allow: [lookup_tenant]\n    platform:\n      kind: vapi\n      secret_env: TEST_VAPI_SECRET\n"
	cat, err := tools.Load([]byte(strings.Replace(string(tools.DemoCatalogYAML), "agents:\n", agent, 1)))
	require.NoError(t, err)
	return webhookServerWith(t, st, func(c *Config) {
		c.Catalog, c.Replays = cat, guard
		c.PlatformSecrets = map[string][]byte{"vapi-agent": []byte(vapiSecret)}
	})
}

// signedVapi is a Vapi server message signed as Vapi signs it, at a fixed
// moment, so building it twice captures the same request.
func signedVapi(body string, at time.Time) func() *http.Request {
	return func() *http.Request {
		ts := strconv.FormatInt(at.UnixMilli(), 10)
		h := hmac.New(sha256.New, []byte(vapiSecret))
		h.Write([]byte(ts + "." + body))
		req := httptest.NewRequest(http.MethodPost, "/v1/platforms/vapi/vapi-agent", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Timestamp", ts)
		req.Header.Set("X-Signature", hex.EncodeToString(h.Sum(nil)))
		return req
	}
}

func serve(srv http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// A signed request captured on its way to one API process and replayed to
// another on the same ledger is refused there, and logged as refused.
func TestPlatformReplayToAnotherServerIsRefused(t *testing.T) {
	t.Parallel()
	st := ledgertest.Postgres(t)
	a, _ := vapiServer(t, st, nil)
	b, _ := vapiServer(t, st, nil)
	captured := signedVapi(`{"message":{"type":"status-update","status":"in-progress","call":{"id":"call_1"}}}`, time.Now())

	first := serve(a, captured())
	require.Equal(t, http.StatusOK, first.Code, first.Body.String())
	replayed := serve(b, captured())
	require.Equal(t, http.StatusUnauthorized, replayed.Code, replayed.Body.String())
	require.Contains(t, replayed.Body.String(), "seen before")
	again := serve(a, captured())
	require.Equal(t, http.StatusUnauthorized, again.Code, "and to the first: %s", again.Body.String())

	refusals, err := st.RefusalList(t.Context(), 0)
	require.NoError(t, err)
	require.Len(t, refusals, 2)
	for _, r := range refusals {
		require.Equal(t, mt.CodeUnauthorized, r.Code)
		require.Equal(t, "vapi-agent", r.AgentID)
	}
}

// A request that failed before it did anything is forgotten, on every
// server: the platform's retry, wherever it lands, is answered afresh.
func TestPlatformFailedRequestIsForgottenForEveryServer(t *testing.T) {
	t.Parallel()
	st := ledgertest.Postgres(t)
	a, _ := vapiServer(t, st, nil)
	b, _ := vapiServer(t, st, nil)
	unreadable := signedVapi(`{"message":{"call":{"id":"call_1"}}}`, time.Now())

	first := serve(a, unreadable())
	require.Equal(t, http.StatusBadRequest, first.Code, first.Body.String())
	retried := serve(b, unreadable())
	require.Equal(t, http.StatusBadRequest, retried.Code, "not taken for a replay: %s", retried.Body.String())
	require.Contains(t, retried.Body.String(), "message.type is missing")
}

// brokenGuard is a ledger that cannot be reached.
type brokenGuard struct{}

func (brokenGuard) PlatformSignatureClaim(context.Context, string, time.Time) (bool, error) {
	return false, errors.New("connection refused")
}

func (brokenGuard) PlatformSignatureForget(context.Context, string) error {
	return errors.New("connection refused")
}

// A replay check that fails says nothing against the sender: the request
// is answered 503, which the platform retries, not 401, runs nothing, and
// is logged.
func TestPlatformReplayGuardFailureIsRetryable(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	srv, logs := vapiServer(t, st, brokenGuard{})
	req := signedVapi(`{"message":{"type":"status-update","status":"in-progress","call":{"id":"call_1"}}}`, time.Now())()

	rec := serve(srv, req)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, logs.String(), "could not check a platform signature for replay")
	refusals, err := st.RefusalList(t.Context(), 0)
	require.NoError(t, err)
	require.Empty(t, refusals, "no forgery to log")
}
