//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

// The ways a provider fails in a burst, in the order bursts take them.
const (
	way5xxAfterEffect = "5xx_after_effect"
	wayHang           = "hang"
	wayReset          = "reset"
	way429            = "429"
)

var burstWays = []string{way5xxAfterEffect, wayHang, wayReset, way429}

// burstTarget is a stand-in a burst can pick: the variable its base URL is
// printed as, and the requests its rules match. Only POSTs are matched,
// the requests that carry effects (sends, creates, cancels); the reads a
// reconciliation searches with are left alone, so a burst always lands on
// an effect and never on the proof that one happened.
type burstTarget struct {
	name, urlVar, path string
}

var burstTargets = []burstTarget{
	{name: "twilio", urlVar: "TWILIO_BASE_URL", path: "/2010-04-01/"},
	{name: "ses", urlVar: "SES_ENDPOINT", path: "/v2/email/outbound-emails"},
	{name: "sandbox", urlVar: "MAESTRO_HTTP_SERVICE_SANDBOX_URL", path: "/v1/"},
}

// holdFor is how long a hung request is held before it is let go: past the
// connectors' 10s request timeout, so maestro faces an outcome it cannot
// know, and inside the 5s listing lag that follows it, so an effect the
// provider makes late is listed by the time maestro searches for it. A
// provider that acts later than that is one no search can keep from
// doubling a text; the run does not model it.
const holdFor = 12 * time.Second

// providerFaults is what the run's bursts left to clear. Its zero value
// is ready to use.
type providerFaults struct {
	mu sync.Mutex
	// first is the burst number the run starts from (CHAOS_FIRST_BURST).
	first     int
	firstOnce sync.Once
	// placed counts the requests each target and way was set to fail.
	placed   map[string]int
	releaser sync.Once
	stop     chan struct{}
}

// firstBurst is the burst number a run starts from, CHAOS_FIRST_BURST or
// 0: a short run that makes a few bursts covers other stand-ins and ways
// when started further along the cycle.
func firstBurst() (int, error) {
	v := os.Getenv("CHAOS_FIRST_BURST")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("CHAOS_FIRST_BURST %q is not a burst number", v)
	}
	return n, nil
}

// providerBurst makes one stand-in fail several requests in one way: burst
// n picks stand-in n%3 and way (n/3)%4, so twelve bursts make every
// stand-in fail in every way. Hung requests are let go after holdFor;
// clearFaults drops what is left of every burst.
func (c *cluster) providerBurst(ctx context.Context, n int) (faultEvent, error) {
	f := &c.faults
	var err error
	f.firstOnce.Do(func() { f.first, err = firstBurst() })
	if err != nil {
		return faultEvent{Kind: kindProviderBurst}, err
	}
	n += f.first
	target := burstTargets[n%len(burstTargets)]
	way := burstWays[(n/len(burstTargets))%len(burstWays)]
	cycle := n / (len(burstTargets) * len(burstWays))
	rule := burstRule(way, cycle, 3+randomInt(6))
	rule.Method, rule.Path = http.MethodPost, target.path

	base := c.envMap()[target.urlVar]
	if err := postRule(ctx, base, rule); err != nil {
		return faultEvent{Kind: kindProviderBurst}, fmt.Errorf("error injecting %s at %s: %w", way, target.name, err)
	}
	if way == wayHang {
		f.releaser.Do(func() {
			f.stop = make(chan struct{})
			go c.releaseHung(ctx, f.stop)
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.placed == nil {
		f.placed = map[string]int{}
	}
	f.placed[target.name+" "+way] += rule.Times
	return faultEvent{
		Kind:   kindProviderBurst,
		Target: target.name,
		Detail: fmt.Sprintf("%s: %s %d %s, %d requests, %s %s*", way, rule.Action, rule.Status, rule.Phase, rule.Times, rule.Method, rule.Path),
	}, nil
}

// burstRule is the rule for way. A reset loses the answer after the effect
// in even cycles and the request before it in odd ones, so both sides of
// the effect are covered; so are a 500 and a 503.
func burstRule(way string, cycle, times int) fault.Rule {
	switch way {
	case way5xxAfterEffect:
		status := http.StatusInternalServerError
		if cycle%2 == 1 {
			status = http.StatusServiceUnavailable
		}
		return fault.Rule{Action: fault.Fail, Status: status, Phase: fault.AfterEffect, Times: times}
	case wayHang:
		return fault.Rule{Action: fault.Hang, Phase: fault.BeforeEffect, Times: times}
	case wayReset:
		phase := fault.AfterEffect
		if cycle%2 == 1 {
			phase = fault.BeforeEffect
		}
		return fault.Rule{Action: fault.Reset, Phase: phase, Times: times}
	}
	return fault.Rule{Action: fault.Fail, Status: http.StatusTooManyRequests, Phase: fault.BeforeEffect, Times: times}
}

// wayOf names the way a pending rule was placed for.
func wayOf(r fault.Rule) string {
	switch {
	case r.Action == fault.Hang:
		return wayHang
	case r.Action == fault.Reset:
		return wayReset
	case r.Status == http.StatusTooManyRequests:
		return way429
	}
	return way5xxAfterEffect
}

// releaseHung lets go of every request a stand-in has held for holdFor,
// until stop is closed.
func (c *cluster) releaseHung(ctx context.Context, stop <-chan struct{}) {
	env := c.envMap()
	since := map[string]time.Time{}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case <-tick.C:
		}
		for _, target := range burstTargets {
			base := env[target.urlVar]
			state, err := faultState(ctx, base)
			if err != nil || state.Held == 0 {
				delete(since, target.name)
				continue
			}
			first, ok := since[target.name]
			if !ok {
				since[target.name] = time.Now()
				continue
			}
			if time.Since(first) < holdFor {
				continue
			}
			if err := adminCall(ctx, http.MethodPost, base+fault.AdminPath+"/release", nil, nil); err != nil {
				c.t.Logf("error releasing the requests %s holds: %v", target.name, err)
				continue
			}
			delete(since, target.name)
		}
	}
}

// clearFaults drops every stand-in's pending rules and releases every held
// request, and returns how many requests each burst's target and way
// actually failed. It is called once the load is done, before the proof.
func (c *cluster) clearFaults(ctx context.Context) (map[string]int, error) {
	f := &c.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stop != nil {
		close(f.stop)
		f.stop = nil
	}
	hit := map[string]int{}
	for k, n := range f.placed {
		hit[k] = n
	}
	env := c.envMap()
	for _, target := range burstTargets {
		base := env[target.urlVar]
		state, err := faultState(ctx, base)
		if err != nil {
			return nil, fmt.Errorf("error reading %s's faults: %w", target.name, err)
		}
		if err := adminCall(ctx, http.MethodDelete, base+fault.AdminPath, nil, nil); err != nil {
			return nil, fmt.Errorf("error clearing %s's faults: %w", target.name, err)
		}
		for _, r := range state.Rules {
			hit[target.name+" "+wayOf(r)] -= r.Times
		}
	}
	return hit, nil
}

func postRule(ctx context.Context, base string, rule fault.Rule) error {
	b, err := json.Marshal(rule)
	if err != nil {
		return fmt.Errorf("error encoding the rule: %w", err)
	}
	return adminCall(ctx, http.MethodPost, base+fault.AdminPath, b, nil)
}

func faultState(ctx context.Context, base string) (fault.State, error) {
	var state fault.State
	err := adminCall(ctx, http.MethodGet, base+fault.AdminPath, nil, &state)
	return state, err
}

// adminCall calls a stand-in's fault controls and decodes the state they
// answer with into out, if out is not nil.
func adminCall(ctx context.Context, method, url string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("error building %s %s: %w", method, url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("error calling %s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("error decoding %s %s: %w", method, url, err)
	}
	return nil
}
