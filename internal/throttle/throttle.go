// Package throttle slows down guessing: it counts failed credential checks
// (a wrong bearer key, a wrong console sign-in key, a bad platform
// signature) per client address, and once an address has failed too
// often it is refused, before any check, for a backoff that doubles with
// each further failure, up to a cap. A success forgets the address.
//
// Only failures cost anything: a request whose credential is right takes
// a map lookup under a lock, and another address is never held up.
package throttle

import (
	"container/list"
	"log/slog"
	"net/netip"
	"sync"
	"time"
)

// Defaults for Config.
const (
	DefaultFailures   = 20
	DefaultWindow     = time.Minute
	DefaultBackoff    = 5 * time.Second
	DefaultMaxBackoff = 15 * time.Minute
	DefaultMaxClients = 100_000
)

// Config sets how many failures an address may make and how long it then
// waits.
type Config struct {
	// Failures is how many failed checks one address may make within
	// Window before it is refused. Optional: default 20.
	Failures int
	// Window is the span Failures are counted over; a quieter address
	// starts afresh. Optional: default 1m.
	Window time.Duration
	// Backoff is how long an address is refused the first time it is
	// throttled; each failure after a backoff doubles it. Optional:
	// default 5s.
	Backoff time.Duration
	// MaxBackoff caps the backoff. An address that fails nothing for this
	// long after its last backoff ended starts afresh. Optional: default
	// 15m.
	MaxBackoff time.Duration
	// MaxClients bounds the addresses remembered; past it the address
	// that failed least recently is forgotten. Optional: default 100,000
	// (a few tens of MiB at most).
	MaxClients int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed. Optional: default none, so a request's client is the
	// connection's peer (RemoteAddr) and X-Forwarded-For is ignored: a
	// header any client can set must not choose whose budget it spends.
	TrustedProxies []netip.Prefix
	// Now is the clock. Optional: default time.Now.
	Now func() time.Time
	// Logger. Optional: default slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns c with optional fields filled in.
func (c Config) WithDefaults() Config {
	if c.Failures <= 0 {
		c.Failures = DefaultFailures
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	c.MaxBackoff = max(c.MaxBackoff, c.Backoff)
	if c.MaxClients <= 0 {
		c.MaxClients = DefaultMaxClients
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Throttle counts failed credential checks per client address. It is safe
// for concurrent use; one is shared by every entry point of a process, so
// an address has one budget however it guesses.
type Throttle struct {
	cfg Config

	mu      sync.Mutex
	clients map[string]*list.Element // of *record
	// recent orders the records by last failure, most recent first, so
	// the one to forget is at the back.
	recent *list.List
}

// record is one address's failures.
type record struct {
	client string
	// failures counted since windowStart.
	failures    int
	windowStart time.Time
	// strikes is how many times the address has been throttled since it
	// last started afresh; it sets the next backoff.
	strikes      int
	blockedUntil time.Time
}

// New returns a throttle with cfg's limits.
func New(cfg Config) *Throttle {
	return &Throttle{cfg: cfg.WithDefaults(), clients: map[string]*list.Element{}, recent: list.New()}
}

// Wait is how long client must still wait before its credentials are
// checked again: zero if it may try now.
func (t *Throttle) Wait(client string) time.Duration {
	if client == "" {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.clients[client]
	if !ok {
		return 0
	}
	return max(el.Value.(*record).blockedUntil.Sub(t.cfg.Now()), 0)
}

// Succeeded resets client's backoff: it holds a valid credential, so its
// next throttling, if any, starts again at Config.Backoff. The failures
// counted in the current window stay: an address holding one valid key
// (an agent's) could otherwise clear its count between guesses at another.
func (t *Throttle) Succeeded(client string) {
	if client == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, ok := t.clients[client]; ok {
		el.Value.(*record).strikes = 0
	}
}

// Failed counts a failed check by client, of what kind of credential
// (for the log). It logs one warning each time the address is throttled,
// not one per refused request.
func (t *Throttle) Failed(client, what string) {
	if client == "" {
		return
	}
	now := t.cfg.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.forgetStale(now)
	rec := t.touch(client, now)
	if now.Sub(rec.windowStart) >= t.cfg.Window {
		rec.failures, rec.windowStart = 0, now
	}
	rec.failures++
	// Once throttled, an address gets no fresh budget after its backoff:
	// until a success, each failure throttles it again, for twice as long.
	if rec.strikes == 0 && rec.failures < t.cfg.Failures {
		return
	}
	rec.strikes++
	backoff := t.backoff(rec.strikes)
	rec.blockedUntil = now.Add(backoff)
	t.cfg.Logger.Warn("client throttled after failed credential checks",
		"client", client, "credential", what, "failures", rec.failures, "times_throttled", rec.strikes, "retry_after", backoff)
}

// backoff is the wait of an address's nth throttling.
func (t *Throttle) backoff(strikes int) time.Duration {
	d := t.cfg.Backoff
	for i := 1; i < strikes && d < t.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, t.cfg.MaxBackoff)
}

// touch returns client's record, made most recent, creating it (and
// forgetting the least recent address if there are too many) if needed.
func (t *Throttle) touch(client string, now time.Time) *record {
	if el, ok := t.clients[client]; ok {
		t.recent.MoveToFront(el)
		return el.Value.(*record)
	}
	for len(t.clients) >= t.cfg.MaxClients {
		t.forget(t.recent.Back())
	}
	rec := &record{client: client, windowStart: now}
	t.clients[client] = t.recent.PushFront(rec)
	return rec
}

// forgetStale forgets addresses, least recent first, that have nothing
// left to count: no failure within the window and no backoff that could
// still double. It stops at the first that has, so a call costs, over
// time, a constant.
func (t *Throttle) forgetStale(now time.Time) {
	for el := t.recent.Back(); el != nil; el = t.recent.Back() {
		rec := el.Value.(*record)
		if now.Sub(rec.windowStart) < t.cfg.Window || now.Before(rec.blockedUntil.Add(t.cfg.MaxBackoff)) {
			return
		}
		t.forget(el)
	}
}

func (t *Throttle) forget(el *list.Element) {
	delete(t.clients, el.Value.(*record).client)
	t.recent.Remove(el)
}

// Clients is how many addresses the throttle remembers.
func (t *Throttle) Clients() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.clients)
}
