package admission

import "sync"

// startedSessionsCap bounds the sessions remembered: far more than one
// process has calls open at once, and a session forgotten costs only one
// start that finds its workflow there.
const startedSessionsCap = 16384

// startedSessions remembers the sessions whose workflow this process has
// seen started, so their later calls skip the start. A session's workflow
// ID is never reused (reject-duplicate), so once started, starting it
// again can only find it: skipping the round trip changes nothing but
// the time it takes (ADR 8).
type startedSessions struct {
	mu    sync.Mutex
	seen  map[string]struct{}
	order []string // oldest first, up to startedSessionsCap
}

func (s *startedSessions) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.seen[id]
	return ok
}

func (s *startedSessions) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = make(map[string]struct{})
	}
	if _, ok := s.seen[id]; ok {
		return
	}
	if len(s.order) == startedSessionsCap {
		delete(s.seen, s.order[0])
		s.order = s.order[1:]
	}
	s.seen[id] = struct{}{}
	s.order = append(s.order, id)
}
