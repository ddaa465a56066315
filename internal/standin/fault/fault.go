// Package fault injects deterministic provider trouble into the stand-ins:
// failed requests, responses lost after the effect, and held requests.
package fault

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Header is set on every response the injector fabricates, so a layer that
// stores responses (an idempotency cache) can tell an injected failure from
// an endpoint's own answer, and so a human reading a trace can too.
const Header = "Standin-Fault"

// Options configures an Injector.
type Options struct {
	// WriteError writes an injected failure in the provider's error shape.
	// Optional: default a plain-text body with the status text.
	WriteError func(w http.ResponseWriter, status int)
}

// Injector holds pending fault rules and the requests they are holding.
// Apart from an explicit Delay nothing depends on wall-clock time: tests
// wait on WaitHeld rather than sleeping. It is safe for concurrent use.
type Injector struct {
	writeError func(w http.ResponseWriter, status int)

	mu      sync.Mutex
	rules   []Rule // Times counts down as requests consume the rule
	held    int
	release chan struct{} // closed by Release to free every request held so far
	changed chan struct{} // closed and replaced whenever held changes
}

// New returns an Injector with no rules.
func New(opts Options) *Injector {
	writeError := opts.WriteError
	if writeError == nil {
		writeError = func(w http.ResponseWriter, status int) {
			http.Error(w, http.StatusText(status), status)
		}
	}
	return &Injector{
		writeError: writeError,
		release:    make(chan struct{}),
		changed:    make(chan struct{}),
	}
}

// Add queues rules behind the ones already pending. A request is affected by
// at most one rule per phase: the oldest pending one that matches it.
func (i *Injector) Add(rules ...Rule) error {
	normalized := make([]Rule, 0, len(rules))
	for _, r := range rules {
		n, err := r.normalized()
		if err != nil {
			return fmt.Errorf("error adding fault rule: %w", err)
		}
		normalized = append(normalized, n)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.rules = append(i.rules, normalized...)
	return nil
}

// FailNext makes the next n requests fail with status before any effect.
// It panics if status is not a 4xx or 5xx code.
func (i *Injector) FailNext(n, status int) {
	i.mustAdd(Rule{Action: Fail, Times: n, Status: status})
}

// DelayNext holds the next n responses for d after their effect happened.
// It panics if d is not positive.
func (i *Injector) DelayNext(n int, d time.Duration) {
	i.mustAdd(Rule{Action: Delay, Times: n, Delay: d})
}

// HangNext holds the next n requests before any effect until Release.
func (i *Injector) HangNext(n int) {
	i.mustAdd(Rule{Action: Hang, Times: n})
}

func (i *Injector) mustAdd(r Rule) {
	if err := i.Add(r); err != nil {
		panic(err)
	}
}

// Rules returns the pending rules; Times is what is left of each.
func (i *Injector) Rules() []Rule {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]Rule(nil), i.rules...)
}

// Held reports how many requests are being delayed or hung right now.
func (i *Injector) Held() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.held
}

// WaitHeld blocks until at least n requests are held at once, which tells a
// test that a hung or delayed request has reached its fault.
func (i *Injector) WaitHeld(ctx context.Context, n int) error {
	for {
		i.mu.Lock()
		held, changed := i.held, i.changed
		i.mu.Unlock()
		if held >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("error waiting for %d held requests (%d held): %w", n, held, ctx.Err())
		}
	}
}

// Release lets every currently held request continue. Rules still pending
// keep applying to later requests.
func (i *Injector) Release() {
	i.mu.Lock()
	defer i.mu.Unlock()
	close(i.release)
	i.release = make(chan struct{})
}

// Reset drops every pending rule and releases every held request.
func (i *Injector) Reset() {
	i.mu.Lock()
	i.rules = nil
	i.mu.Unlock()
	i.Release()
}

// take consumes the oldest pending rule that matches req in phase, and hands
// back the release channel a hold must wait on.
func (i *Injector) take(req *http.Request, phase Phase) (Rule, <-chan struct{}, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	for idx, r := range i.rules {
		if !r.matches(req, phase) {
			continue
		}
		i.rules[idx].Times--
		if i.rules[idx].Times == 0 {
			i.rules = append(i.rules[:idx], i.rules[idx+1:]...)
		}
		return r, i.release, true
	}
	return Rule{}, nil, false
}

// pending reports whether any rule for phase is waiting, so the injector can
// stay out of the way (no response buffering) when there is nothing to do.
func (i *Injector) pending(phase Phase) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, r := range i.rules {
		if r.Phase == phase {
			return true
		}
	}
	return false
}

// hold blocks a request as the rule demands. A Delay ends early when the
// client leaves because nobody is waiting for the answer any more; a Hang does
// not, so the test keeps control of when the provider acts.
func (i *Injector) hold(ctx context.Context, r Rule, release <-chan struct{}) {
	i.addHeld(1)
	defer i.addHeld(-1)

	if r.Action == Hang {
		<-release
		return
	}
	timer := time.NewTimer(r.Delay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	case <-release:
	}
}

func (i *Injector) addHeld(delta int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.held += delta
	close(i.changed)
	i.changed = make(chan struct{})
}

func (i *Injector) fail(w http.ResponseWriter, status int) {
	w.Header().Set(Header, string(Fail))
	i.writeError(w, status)
}
