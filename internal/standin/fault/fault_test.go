package fault_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

// provider is a minimal stand-in: every request it serves is one effect.
type provider struct {
	inj     *fault.Injector
	srv     *httptest.Server
	effects atomic.Int64
}

func newProvider(t *testing.T) *provider {
	t.Helper()
	p := &provider{inj: fault.New(fault.Options{
		WriteError: func(w http.ResponseWriter, status int) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, `{"provider_error":true}`)
		},
	})}
	mux := http.NewServeMux()
	p.inj.RegisterAdmin(mux)
	mux.Handle("/", p.inj.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.effects.Add(1)
		w.Header().Set("X-Effect", "done")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "effect for "+r.URL.Path)
	})))
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	// Cleanups run last-in first-out: held requests are released before
	// the server waits for them to finish.
	t.Cleanup(p.inj.Reset)
	return p
}

type result struct {
	status int
	header http.Header
	body   string
	err    error
}

func (p *provider) do(ctx context.Context, method, path, body string) result {
	req, err := http.NewRequestWithContext(ctx, method, p.srv.URL+path, strings.NewReader(body))
	if err != nil {
		return result{err: err}
	}
	resp, err := p.srv.Client().Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, header: resp.Header, body: string(b), err: err}
}

// doAsync runs the request in the background; the channel yields its result.
func (p *provider) doAsync(ctx context.Context, method, path string) <-chan result {
	ch := make(chan result, 1)
	go func() { ch <- p.do(ctx, method, path, "") }()
	return ch
}

func TestFailNextSkipsTheEffect(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.inj.FailNext(2, http.StatusServiceUnavailable)

	for range 2 {
		res := p.do(t.Context(), http.MethodPost, "/send", "")
		require.NoError(t, res.err)
		require.Equal(t, http.StatusServiceUnavailable, res.status)
		require.JSONEq(t, `{"provider_error":true}`, res.body)
		require.Equal(t, "fail", res.header.Get(fault.Header))
	}
	require.Zero(t, p.effects.Load())

	res := p.do(t.Context(), http.MethodPost, "/send", "")
	require.NoError(t, res.err)
	require.Equal(t, http.StatusCreated, res.status)
	require.Empty(t, res.header.Get(fault.Header))
	require.EqualValues(t, 1, p.effects.Load())
	require.Empty(t, p.inj.Rules())
}

func TestRulesMatchMethodAndPath(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	require.NoError(t, p.inj.Add(fault.Rule{Action: fault.Fail, Status: 429, Method: "post", Path: "/v1/refunds"}))

	res := p.do(t.Context(), http.MethodGet, "/v1/refunds", "")
	require.Equal(t, http.StatusCreated, res.status, "GET is not matched")
	res = p.do(t.Context(), http.MethodPost, "/v1/work_orders", "")
	require.Equal(t, http.StatusCreated, res.status, "other path is not matched")
	res = p.do(t.Context(), http.MethodPost, "/v1/refunds/re_1/cancel", "")
	require.Equal(t, http.StatusTooManyRequests, res.status, "path matches by prefix")
	res = p.do(t.Context(), http.MethodPost, "/v1/refunds", "")
	require.Equal(t, http.StatusCreated, res.status, "rule used up")
}

func TestRulesApplyInOrder(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.inj.FailNext(1, 500)
	p.inj.FailNext(1, 502)

	require.Equal(t, 500, p.do(t.Context(), http.MethodPost, "/x", "").status)
	require.Equal(t, 502, p.do(t.Context(), http.MethodPost, "/x", "").status)
	require.Equal(t, 201, p.do(t.Context(), http.MethodPost, "/x", "").status)
}

func TestHangBeforeEffectWaitsForRelease(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.inj.HangNext(1)

	done := p.doAsync(t.Context(), http.MethodPost, "/send")
	waitHeld(t, p.inj, 1)
	require.Zero(t, p.effects.Load(), "a hang before the effect holds it back")

	p.inj.Release()
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, http.StatusCreated, res.status)
	require.EqualValues(t, 1, p.effects.Load())
}

func TestHangAfterEffectLosesTheResponse(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	require.NoError(t, p.inj.Add(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect}))

	ctx, giveUp := context.WithCancel(t.Context())
	done := p.doAsync(ctx, http.MethodPost, "/send")
	waitHeld(t, p.inj, 1)
	require.EqualValues(t, 1, p.effects.Load(), "the effect happened before the hold")

	giveUp()
	res := <-done
	require.ErrorIs(t, res.err, context.Canceled)
	require.EqualValues(t, 1, p.effects.Load())

	// The provider is still holding the lost response; later requests pass.
	require.Equal(t, 1, p.inj.Held())
	require.Equal(t, http.StatusCreated, p.do(t.Context(), http.MethodPost, "/again", "").status)
}

func TestDelayAfterEffectDeliversTheOriginalResponse(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.inj.DelayNext(1, time.Millisecond)

	res := p.do(t.Context(), http.MethodPost, "/send", "")
	require.NoError(t, res.err)
	require.Equal(t, http.StatusCreated, res.status)
	require.Equal(t, "done", res.header.Get("X-Effect"))
	require.Equal(t, "effect for /send", res.body)
	require.Empty(t, p.inj.Rules())
}

func TestDelayEndsWhenReleased(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.inj.DelayNext(1, time.Hour)

	done := p.doAsync(t.Context(), http.MethodPost, "/send")
	waitHeld(t, p.inj, 1)
	p.inj.Release()
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, http.StatusCreated, res.status)
}

func TestFailAfterEffectHidesASuccess(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	require.NoError(t, p.inj.Add(fault.Rule{Action: fault.Fail, Status: 502, Phase: fault.AfterEffect}))

	res := p.do(t.Context(), http.MethodPost, "/send", "")
	require.NoError(t, res.err)
	require.Equal(t, http.StatusBadGateway, res.status)
	require.Empty(t, res.header.Get("X-Effect"), "the real response is discarded")
	require.EqualValues(t, 1, p.effects.Load())
}

func TestResetDropsRulesAndReleasesHeldRequests(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.inj.HangNext(1)
	p.inj.FailNext(5, 500)

	done := p.doAsync(t.Context(), http.MethodPost, "/send")
	waitHeld(t, p.inj, 1)
	p.inj.Reset()

	require.Equal(t, http.StatusCreated, (<-done).status)
	require.Empty(t, p.inj.Rules())
	require.Equal(t, http.StatusCreated, p.do(t.Context(), http.MethodPost, "/send", "").status)
}

func TestWaitHeldGivesUpWithTheContext(t *testing.T) {
	t.Parallel()
	inj := fault.New(fault.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, inj.WaitHeld(ctx, 1), context.Canceled)
}

func TestAdminEndpoint(t *testing.T) {
	t.Parallel()
	p := newProvider(t)

	res := p.do(t.Context(), http.MethodPost, fault.AdminPath, `{"action":"fail","status":503,"times":2,"path":"/send"}`)
	require.NoError(t, res.err)
	require.Equal(t, http.StatusCreated, res.status)

	var state fault.State
	res = p.do(t.Context(), http.MethodGet, fault.AdminPath, "")
	require.NoError(t, json.Unmarshal([]byte(res.body), &state))
	require.Equal(t, []fault.Rule{{Action: fault.Fail, Times: 2, Status: 503, Phase: fault.BeforeEffect, Path: "/send"}}, state.Rules)
	require.Zero(t, state.Held)

	require.Equal(t, http.StatusServiceUnavailable, p.do(t.Context(), http.MethodPost, "/send", "").status)
	require.Equal(t, http.StatusOK, p.do(t.Context(), http.MethodDelete, fault.AdminPath, "").status)
	require.Equal(t, http.StatusCreated, p.do(t.Context(), http.MethodPost, "/send", "").status)

	res = p.do(t.Context(), http.MethodPost, fault.AdminPath, `{"action":"hang"}`)
	require.Equal(t, http.StatusCreated, res.status)
	done := p.doAsync(t.Context(), http.MethodPost, "/send")
	waitHeld(t, p.inj, 1)
	res = p.do(t.Context(), http.MethodPost, fault.AdminPath+"/release", "")
	require.Equal(t, http.StatusOK, res.status)
	require.Equal(t, http.StatusCreated, (<-done).status)
}

func TestAdminEndpointRejectsBadRules(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	for _, body := range []string{
		`{"action":"fail"}`,
		`{"action":"fail","status":200}`,
		`{"action":"delay"}`,
		`{"action":"delay","delay":"soon"}`,
		`{"action":"explode"}`,
		`{"action":"hang","phase":"during"}`,
		`{"action":"fail","stauts":503}`,
		`{"action":"hang","times":-1}`,
		`not json`,
	} {
		res := p.do(t.Context(), http.MethodPost, fault.AdminPath, body)
		require.NoError(t, res.err)
		require.Equal(t, http.StatusBadRequest, res.status, body)
		require.Contains(t, res.body, `"error"`, body)
	}
	require.Empty(t, p.inj.Rules())
}

func TestRuleJSONRoundTrip(t *testing.T) {
	t.Parallel()
	in := fault.Rule{Action: fault.Delay, Times: 3, Delay: 1500 * time.Millisecond, Phase: fault.AfterEffect, Method: "POST", Path: "/v2"}
	data, err := json.Marshal(in)
	require.NoError(t, err)
	require.JSONEq(t, `{"action":"delay","times":3,"delay":"1.5s","phase":"after_effect","method":"POST","path":"/v2"}`, string(data))

	var out fault.Rule
	require.NoError(t, json.Unmarshal(data, &out))
	require.Equal(t, in, out)
}

func TestConvenienceMethodsPanicOnNonsense(t *testing.T) {
	t.Parallel()
	inj := fault.New(fault.Options{})
	require.Panics(t, func() { inj.FailNext(1, http.StatusOK) })
	require.Panics(t, func() { inj.DelayNext(1, 0) })
	require.Empty(t, inj.Rules())
}

// waitHeld waits until n requests are held by a fault, failing the test
// instead of hanging if the fault never triggers.
func waitHeld(t *testing.T, inj *fault.Injector, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, inj.WaitHeld(ctx, n))
}

func TestResetDropsTheConnectionInEitherPhase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		phase   fault.Phase
		effects int64
	}{{fault.BeforeEffect, 0}, {fault.AfterEffect, 1}} {
		t.Run(string(tc.phase), func(t *testing.T) {
			t.Parallel()
			p := newProvider(t)
			require.NoError(t, p.inj.Add(fault.Rule{Action: fault.Reset, Phase: tc.phase}))

			res := p.do(t.Context(), http.MethodPost, "/send", `{"a":1}`)
			require.Error(t, res.err, "no answer at all")
			require.Equal(t, tc.effects, p.effects.Load())
			require.Equal(t, http.StatusCreated, p.do(t.Context(), http.MethodPost, "/send", "").status, "one request only")
		})
	}
}

func TestRespondReplacesTheAnswerInEitherPhase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		phase   fault.Phase
		effects int64
	}{{fault.BeforeEffect, 0}, {fault.AfterEffect, 1}} {
		t.Run(string(tc.phase), func(t *testing.T) {
			t.Parallel()
			p := newProvider(t)
			require.NoError(t, p.inj.Add(fault.Rule{Action: fault.Respond, Status: http.StatusCreated, Body: `{"status":"failed"}`, Phase: tc.phase}))

			res := p.do(t.Context(), http.MethodPost, "/send", "")
			require.NoError(t, res.err)
			require.Equal(t, http.StatusCreated, res.status)
			require.JSONEq(t, `{"status":"failed"}`, res.body)
			require.Equal(t, "respond", res.header.Get(fault.Header))
			require.Equal(t, tc.effects, p.effects.Load())
		})
	}
}

func TestRespondAndResetRulesTravelAsJSON(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	res := p.do(t.Context(), http.MethodPost, fault.AdminPath, `{"action":"respond","status":200,"body":"{}","phase":"after_effect"}`)
	require.Equal(t, http.StatusCreated, res.status, res.body)
	res = p.do(t.Context(), http.MethodPost, fault.AdminPath, `{"action":"reset"}`)
	require.Equal(t, http.StatusCreated, res.status, res.body)
	require.Equal(t, []fault.Rule{
		{Action: fault.Respond, Times: 1, Status: 200, Body: "{}", Phase: fault.AfterEffect},
		{Action: fault.Reset, Times: 1, Phase: fault.BeforeEffect},
	}, p.inj.Rules())

	for _, body := range []string{`{"action":"respond"}`, `{"action":"respond","status":99}`} {
		res := p.do(t.Context(), http.MethodPost, fault.AdminPath, body)
		require.Equal(t, http.StatusBadRequest, res.status, body)
	}
}
