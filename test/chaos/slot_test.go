//go:build chaos

package chaos

import (
	"fmt"
	"sync"
	"time"
)

// launchAttempts bounds the starts tried for a restarted process. One
// started while PostgreSQL or Temporal is down may fail, and is started
// again, as a supervisor would.
const launchAttempts = 10

// slot is a place in the cluster that one process holds at a time; a
// restart puts the successor in the same place: same name, arguments and
// address.
type slot struct {
	name   string
	launch func() (*proc, error)

	mu sync.Mutex
	p  *proc
}

func newSlot(name string, launch func() (*proc, error)) (*slot, error) {
	p, err := launch()
	if err != nil {
		return nil, fmt.Errorf("error starting %s: %w", name, err)
	}
	return &slot{name: name, launch: launch, p: p}, nil
}

// restart ends the process with end and starts its successor. On failure
// the ended process stays in place.
func (s *slot) restart(end func(*proc)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	end(s.p)
	var err error
	for attempt := range launchAttempts {
		if attempt > 0 {
			time.Sleep(time.Second) // a supervisor's back-off between starts
		}
		var next *proc
		if next, err = s.launch(); err == nil {
			s.p = next
			return nil
		}
	}
	return fmt.Errorf("error restarting %s after %d attempts: %w", s.name, launchAttempts, err)
}

// stop ends the process for good, letting it drain.
func (s *slot) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.stop()
}

// current is the process holding the slot now.
func (s *slot) current() *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p
}
