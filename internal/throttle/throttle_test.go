package throttle_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/throttle"
)

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newThrottle(t *testing.T, cfg throttle.Config) (*throttle.Throttle, *clock, *bytes.Buffer) {
	t.Helper()
	c := newClock()
	var logs bytes.Buffer
	cfg.Now = c.Now
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	return throttle.New(cfg), c, &logs
}

// guess is one credential check as a handler makes it: refused unread
// while the client waits, else checked and counted.
func guess(th *throttle.Throttle, client string, right bool) time.Duration {
	if wait := th.Wait(client); wait > 0 {
		return wait
	}
	if right {
		th.Succeeded(client)
	} else {
		th.Failed(client, "test key")
	}
	return 0
}

func TestThrottleBacksOffAndLogsOncePerBurst(t *testing.T) {
	t.Parallel()
	th, clk, logs := newThrottle(t, throttle.Config{Failures: 5, Window: time.Minute, Backoff: 2 * time.Second, MaxBackoff: 10 * time.Second})

	refused := 0
	for range 300 {
		if guess(th, "203.0.113.7", false) > 0 {
			refused++
		}
	}
	require.Equal(t, 295, refused, "five failures are checked; the other 295 wait")
	require.Equal(t, 1, strings.Count(logs.String(), "client throttled"), "one warning for the burst, not one per request")
	require.Contains(t, logs.String(), `"client":"203.0.113.7"`)
	require.Equal(t, 2*time.Second, th.Wait("203.0.113.7"))

	require.Zero(t, guess(th, "198.51.100.1", true), "another address is not held up")
	require.Zero(t, guess(th, "198.51.100.1", false))

	// Each failure after a backoff doubles it, up to the cap.
	for _, want := range []time.Duration{4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		clk.advance(th.Wait("203.0.113.7"))
		require.Zero(t, guess(th, "203.0.113.7", false), "after its backoff the address may try again")
		require.Equal(t, want, th.Wait("203.0.113.7"))
	}
	require.Equal(t, 5, strings.Count(logs.String(), "client throttled"), "one warning per backoff")

	// A success after the backoff resets it.
	clk.advance(th.Wait("203.0.113.7"))
	require.Zero(t, guess(th, "203.0.113.7", true))
	require.Zero(t, guess(th, "203.0.113.7", false))
	require.Equal(t, 2*time.Second, th.Wait("203.0.113.7"), "the window's failures still count, but the backoff starts again")
}

func TestThrottleSuccessDoesNotClearTheWindow(t *testing.T) {
	t.Parallel()
	th, _, _ := newThrottle(t, throttle.Config{Failures: 5})
	// An agent holding its own key guesses another's between its calls.
	for range 4 {
		guess(th, "203.0.113.7", false)
		guess(th, "203.0.113.7", true)
	}
	guess(th, "203.0.113.7", false)
	require.Positive(t, th.Wait("203.0.113.7"))
}

func TestThrottleForgetsQuietAddresses(t *testing.T) {
	t.Parallel()
	th, clk, _ := newThrottle(t, throttle.Config{Failures: 3, Window: time.Minute, Backoff: time.Second, MaxBackoff: time.Minute})
	for range 2 {
		guess(th, "203.0.113.7", false)
	}
	clk.advance(time.Minute)
	guess(th, "203.0.113.8", false)
	require.Equal(t, 1, th.Clients(), "an address quiet for a window is forgotten")
	guess(th, "203.0.113.8", false)
	guess(th, "203.0.113.8", false)
	require.Positive(t, th.Wait("203.0.113.8"))
	clk.advance(time.Minute)
	guess(th, "203.0.113.9", false)
	require.Equal(t, 2, th.Clients(), "a throttled address is remembered a while after its backoff")
	clk.advance(time.Minute)
	guess(th, "203.0.113.9", false)
	require.Equal(t, 1, th.Clients())
}

func TestThrottleIsBounded(t *testing.T) {
	t.Parallel()
	th, _, _ := newThrottle(t, throttle.Config{Failures: 2, MaxClients: 100})
	guess(th, "203.0.113.7", false)
	guess(th, "203.0.113.7", false)
	require.Positive(t, th.Wait("203.0.113.7"))
	for i := range 1000 {
		guess(th, fmt.Sprintf("10.0.%d.%d", i/256, i%256), false)
	}
	require.Equal(t, 100, th.Clients())
	require.Zero(t, th.Wait("203.0.113.7"), "the address that failed least recently was forgotten")
}

func TestThrottleIgnoresInProcessRequests(t *testing.T) {
	t.Parallel()
	th, _, _ := newThrottle(t, throttle.Config{Failures: 1})
	guess(th, "", false)
	guess(th, "", false)
	require.Zero(t, th.Wait(""))
	require.Zero(t, th.Clients())
}

func TestClient(t *testing.T) {
	t.Parallel()
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		name, remote, xff string
		trusted           []netip.Prefix
		want              string
	}{
		{"peer", "203.0.113.7:5000", "", nil, "203.0.113.7"},
		{"forwarded-for ignored without trusted proxies", "203.0.113.7:5000", "198.51.100.1", nil, "203.0.113.7"},
		{"forwarded-for from an untrusted peer ignored", "203.0.113.7:5000", "198.51.100.1", proxies, "203.0.113.7"},
		{"trusted proxy", "10.1.2.3:5000", "198.51.100.1", proxies, "198.51.100.1"},
		{"a client's own forwarded-for is not believed", "10.1.2.3:5000", "192.0.2.9, 198.51.100.1, 10.4.4.4", proxies, "198.51.100.1"},
		{"garbage stops the walk", "10.1.2.3:5000", "198.51.100.1, nonsense", proxies, "10.1.2.3"},
		{"IPv6 counts by /64", "[2001:db8:1:2:3:4:5:6]:5000", "", nil, "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6 is IPv4", "[::ffff:203.0.113.7]:5000", "", nil, "203.0.113.7"},
		{"in process", "", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			th := throttle.New(throttle.Config{TrustedProxies: tc.trusted})
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remote
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			require.Equal(t, tc.want, th.Client(r))
		})
	}
}

func TestRetryAfterRoundsUp(t *testing.T) {
	t.Parallel()
	for wait, want := range map[time.Duration]string{time.Millisecond: "1", time.Second: "1", 1500 * time.Millisecond: "2", time.Minute: "60"} {
		w := httptest.NewRecorder()
		throttle.RetryAfter(w, wait)
		require.Equal(t, want, w.Header().Get("Retry-After"), wait)
	}
}

// BenchmarkValidRequest is the cost a request with a valid credential
// pays.
func BenchmarkValidRequest(b *testing.B) {
	th := throttle.New(throttle.Config{})
	for i := range 10_000 {
		th.Failed(fmt.Sprintf("10.0.%d.%d", i/256, i%256), "bench")
	}
	for b.Loop() {
		if th.Wait("203.0.113.7") == 0 {
			th.Succeeded("203.0.113.7")
		}
	}
}

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	got, err := throttle.ParseTrustedProxies(" 10.0.0.0/8, 192.0.2.10 ,,2001:db8::/32")
	require.NoError(t, err)
	require.Equal(t, []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.10/32"), netip.MustParsePrefix("2001:db8::/32"),
	}, got)
	none, err := throttle.ParseTrustedProxies("")
	require.NoError(t, err)
	require.Empty(t, none)
	_, err = throttle.ParseTrustedProxies("10.0.0.0/8, proxy.internal")
	require.ErrorContains(t, err, `"proxy.internal" is neither an IP address nor a CIDR prefix`)
}
