// Package answer tells a waiting API request that its invocation's outcome
// is in the ledger, when the worker that recorded it runs in the same
// process, so the caller hears it without waiting for the workflow to
// complete.
package answer

import (
	"sync"

	"github.com/maestro-run/maestro/internal/ledger"
)

// Answer is what the write that recorded an invocation's outcome returned,
// so a waiter composes the answer without reading the ledger again.
type Answer struct {
	// Invocation is the row as the outcome's commit left it.
	Invocation ledger.Invocation
	// Message is the status reported for the message the receipt names,
	// read with the commit, when MessageRead; nil when none was reported.
	Message     *ledger.MessageStatus
	MessageRead bool
	// StateReads are the effect's recorded reads, when StateReadsRead.
	StateReads     ledger.EffectStateReads
	StateReadsRead bool
}

// Board pairs invocations being waited for with the outcome being
// recorded. A nil *Board tells nobody, and nobody waiting on it hears
// anything: waiters fall back to the workflow's completion.
type Board struct {
	mu      sync.Mutex
	waiting map[string][]chan struct{}
	// told holds the answer closed channels were told, until their wait
	// is forgotten.
	told map[<-chan struct{}]Answer
}

// New returns an empty board.
func New() *Board {
	return &Board{waiting: map[string][]chan struct{}{}, told: map[<-chan struct{}]Answer{}}
}

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

// Recorded says the invocation's outcome is committed to the ledger;
// waiters read it there.
func (b *Board) Recorded(id string) { b.tell(id, nil) }

// Answered says the invocation's outcome is committed to the ledger and
// tells waiters what the commit returned, so they need not read it. Only
// what the ledger returned may be told: the answer must be what a read
// would have found.
func (b *Board) Answered(id string, a Answer) { b.tell(id, &a) }

func (b *Board) tell(id string, a *Answer) {
	if b == nil {
		return
	}
	b.mu.Lock()
	chans := b.waiting[id]
	delete(b.waiting, id)
	if a != nil {
		for _, ch := range chans {
			b.told[ch] = *a
		}
	}
	b.mu.Unlock()
	for _, ch := range chans {
		close(ch)
	}
}

// Heard returns the answer a closed channel from Wait was told, if it was
// told one, until the wait is forgotten.
func (b *Board) Heard(ch <-chan struct{}) (Answer, bool) {
	if b == nil || ch == nil {
		return Answer{}, false
	}
	select {
	case <-ch:
	default:
		return Answer{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.told[ch]
	return a, ok
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
	delete(b.told, ch)
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
