//go:build chaos

package chaos

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// The kinds of fault the run injects, as results/chaos.json names them.
const (
	kindWorkerKill      = "worker_kill"
	kindWorkerKillPair  = "worker_kill_pair"
	kindAPIKill         = "api_kill"
	kindPGRestart       = "pg_restart"
	kindTemporalRestart = "temporal_restart"
	kindProviderBurst   = "provider_burst"
)

// faultEvent is one fault the run injected.
type faultEvent struct {
	// AtSeconds is when the fault began, in seconds since the load began.
	AtSeconds float64 `json:"at_s"`
	Kind      string  `json:"kind"`
	Target    string  `json:"target"`
	Detail    string  `json:"detail,omitempty"`
}

// schedule records the faults as they are injected, from every lane of
// the chaos at once.
type schedule struct {
	mu     sync.Mutex
	began  time.Time
	events []faultEvent
}

func newSchedule(began time.Time) *schedule { return &schedule{began: began} }

// record adds e as begun at at.
func (s *schedule) record(at time.Time, e faultEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.AtSeconds = at.Sub(s.began).Round(time.Millisecond).Seconds()
	s.events = append(s.events, e)
}

// all returns the events in the order they began.
func (s *schedule) all() []faultEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.events)
	slices.SortStableFunc(out, func(a, b faultEvent) int { return cmp.Compare(a.AtSeconds, b.AtSeconds) })
	return out
}

// count is how many events of kind were recorded.
func (s *schedule) count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// workersKilled counts worker processes killed, two for each pair.
func (s *schedule) workersKilled() int {
	return s.count(kindWorkerKill) + 2*s.count(kindWorkerKillPair)
}

// faults adds the schedule and its counts to the figures.
func (f *figures) faults(s *schedule) {
	f.FaultSchedule = s.all()
	f.Kills, f.KillPairs = s.workersKilled(), s.count(kindWorkerKillPair)
	f.APIKills = s.count(kindAPIKill)
	f.APIRestarts = f.APIKills
	f.PGRestarts = s.count(kindPGRestart)
	f.TemporalRestarts = s.count(kindTemporalRestart)
	f.ProviderBursts = s.count(kindProviderBurst)
}
