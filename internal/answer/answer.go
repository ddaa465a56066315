// Package answer tells a waiting API request that its invocation's outcome
// is in the ledger, when the worker that recorded it runs in the same
// process, so the caller hears it without waiting for the workflow to
// complete.
package answer

import "sync"

// Board pairs invocations being waited for with the outcome being
// recorded. A nil *Board tells nobody, and nobody waiting on it hears
// anything: waiters fall back to the workflow's completion.
type Board struct {
	mu      sync.Mutex
	waiting map[string][]chan struct{}
}

// New returns an empty board.
func New() *Board { return &Board{waiting: map[string][]chan struct{}{}} }

// Wait returns a channel closed once Recorded(id) is called, and a stop
// func that forgets the wait. An outcome recorded before Wait is not
// heard: a waiter registers, then reads the ledger once, then waits.
func (b *Board) Wait(id string) (<-chan struct{}, func()) {
	if b == nil {
		return nil, func() {}
	}
	ch := make(chan struct{})
	b.mu.Lock()
	b.waiting[id] = append(b.waiting[id], ch)
	b.mu.Unlock()
	return ch, func() { b.forget(id, ch) }
}

// Recorded says the invocation's outcome is committed to the ledger.
func (b *Board) Recorded(id string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	chans := b.waiting[id]
	delete(b.waiting, id)
	b.mu.Unlock()
	for _, ch := range chans {
		close(ch)
	}
}

// Waiting reports whether a request waits for the invocation's outcome.
func (b *Board) Waiting(id string) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiting[id]) > 0
}

func (b *Board) forget(id string, ch chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	chans := b.waiting[id]
	for i, c := range chans {
		if c == ch {
			chans = append(chans[:i], chans[i+1:]...)
			break
		}
	}
	if len(chans) == 0 {
		delete(b.waiting, id)
	} else {
		b.waiting[id] = chans
	}
}
