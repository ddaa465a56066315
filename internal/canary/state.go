package canary

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/tools"
)

// State says which tools agents are kept from: a tool that requires a
// green canary is withheld while its last canary run failed. No run yet
// withholds nothing, so a fresh deployment is usable before its first
// run; only a failure the provider showed blocks.
//
// Every process reads the ledger, where the worker that ran the canary
// recorded it, at most once per TTL.
type State struct {
	store ledger.Store
	ttl   time.Duration

	mu   sync.Mutex
	last map[string]ledger.CanaryResult
	at   time.Time
}

// NewState returns a State reading store, refreshed at most every ttl.
// Optional: ttl 0 means 5s.
func NewState(store ledger.Store, ttl time.Duration) *State {
	if ttl <= 0 {
		ttl = 5 * time.Second
	}
	return &State{store: store, ttl: ttl}
}

// Refresh rereads the last results now.
func (s *State) Refresh(ctx context.Context) error {
	rows, err := s.store.CanaryLastResults(ctx)
	if err != nil {
		return fmt.Errorf("error reading the canary's state: %w", err)
	}
	last := make(map[string]ledger.CanaryResult, len(rows))
	for _, r := range rows {
		last[r.Tool] = r
	}
	s.mu.Lock()
	s.last, s.at = last, time.Now()
	s.mu.Unlock()
	return nil
}

// results returns the last results, rereading them when stale. A ledger
// that does not answer leaves the last known state in force.
func (s *State) results() map[string]ledger.CanaryResult {
	s.mu.Lock()
	stale := time.Since(s.at) >= s.ttl
	s.mu.Unlock()
	if stale {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.Refresh(ctx)
		cancel()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Withheld reports whether agents are kept from t: it requires a green
// canary and its last run failed.
func (s *State) Withheld(t *tools.Tool) bool {
	if s == nil || !t.RequiresGreenCanary {
		return false
	}
	r, ok := s.results()[t.Name]
	return ok && !r.OK
}

// Status lists every canary tool of cat with its last result.
func (s *State) Status(ctx context.Context, cat *tools.Catalog) (apitype.CanaryStatus, error) {
	if err := s.Refresh(ctx); err != nil {
		return apitype.CanaryStatus{}, err
	}
	last := s.results()
	out := apitype.CanaryStatus{Tools: []apitype.CanaryTool{}}
	for _, t := range cat.Tools() {
		if t.Canary == nil {
			continue
		}
		ct := apitype.CanaryTool{Tool: t.Name, State: apitype.CanaryNone, RequiresGreen: t.RequiresGreenCanary}
		if r, ok := last[t.Name]; ok {
			ct.State = apitype.CanaryRed
			if r.OK {
				ct.State = apitype.CanaryGreen
			}
			checked := r.CheckedAt
			ct.RunID, ct.Detail, ct.Receipt, ct.CheckedAt, ct.LastSuccessAt = r.RunID, r.Detail, r.Receipt, &checked, r.LastSuccessAt
		}
		ct.Withheld = t.RequiresGreenCanary && ct.State == apitype.CanaryRed
		out.Tools = append(out.Tools, ct)
	}
	return out, nil
}
