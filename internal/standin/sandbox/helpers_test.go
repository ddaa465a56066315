package sandbox_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin/fault"
	"github.com/maestro-run/maestro/internal/standin/sandbox"
)

// clock is a hand-driven time source so timestamps are exact in assertions.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// start is 2024-05-01T12:00:00Z, the clock's starting point.
const start = 1714564800

type fixture struct {
	standin *sandbox.Server
	srv     *httptest.Server
	clock   *clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c := &clock{t: time.Unix(start, 0)}
	s, err := sandbox.New(sandbox.Options{Now: c.Now})
	require.NoError(t, err)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	// Runs before srv.Close, which would otherwise wait on hung requests.
	t.Cleanup(s.Faults().Reset)
	return &fixture{standin: s, srv: srv, clock: c}
}

type request struct {
	ctx       context.Context
	key       string
	token     string
	anonymous bool
}

type option func(*request)

func withKey(key string) option            { return func(r *request) { r.key = key } }
func withToken(token string) option        { return func(r *request) { r.token = token } }
func anonymous() option                    { return func(r *request) { r.anonymous = true } }
func withContext(c context.Context) option { return func(r *request) { r.ctx = c } }

type response struct {
	status int
	header http.Header
	raw    []byte
	err    error
}

func (f *fixture) call(t *testing.T, method, path, body string, opts ...option) response {
	t.Helper()
	res := f.try(t, method, path, body, opts...)
	require.NoError(t, res.err)
	return res
}

// try is call without the assertion, for requests expected to be abandoned.
func (f *fixture) try(t *testing.T, method, path, body string, opts ...option) response {
	req := request{ctx: t.Context(), token: f.standin.Token()}
	for _, o := range opts {
		o(&req)
	}
	httpReq, err := http.NewRequestWithContext(req.ctx, method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		return response{err: err}
	}
	if body != "" {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	if !req.anonymous {
		httpReq.Header.Set("Authorization", "Bearer "+req.token)
	}
	if req.key != "" {
		httpReq.Header.Set("Idempotency-Key", req.key)
	}
	resp, err := f.srv.Client().Do(httpReq)
	if err != nil {
		return response{err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, raw: raw, err: err}
}

func (r response) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.raw, &m), string(r.raw))
	return m
}

// field returns one top-level member of the response as raw JSON.
func (r response) field(t *testing.T, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.raw, &m), string(r.raw))
	require.Contains(t, m, name)
	return string(m[name])
}

// apiError is the error envelope's content.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Param   string `json:"param"`
}

func (r response) apiError(t *testing.T) apiError {
	t.Helper()
	var env struct {
		Error *apiError `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.raw, &env), string(r.raw))
	require.NotNil(t, env.Error, string(r.raw))
	return *env.Error
}

func (r response) ids(t *testing.T) []string {
	t.Helper()
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.raw, &page), string(r.raw))
	var out []string
	for _, d := range page.Data {
		out = append(out, d.ID)
	}
	return out
}

const workOrderBody = `{"tenant_id":"t_100","unit":"4B","description":"Kitchen sink leaking","category":"plumbing","priority":"urgent"}`

func (f *fixture) createWorkOrder(t *testing.T, body string, opts ...option) string {
	t.Helper()
	res := f.call(t, http.MethodPost, "/v1/work_orders", body, opts...)
	require.Equal(t, http.StatusCreated, res.status, string(res.raw))
	return res.object(t)["id"].(string)
}

// waitHeld waits until n requests are held by a fault, failing the test
// instead of hanging if the fault never triggers.
func waitHeld(t *testing.T, inj *fault.Injector, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, inj.WaitHeld(ctx, n))
}
