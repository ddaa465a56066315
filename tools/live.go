package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// A Source gives the catalog a request is served with. Load is the catalog
// current now: a reader calls it once per request and keeps the snapshot,
// so a reload mid-request changes nothing it sees. At is an earlier
// version, by hash, for work admitted under it. A *Catalog is a Source of
// itself alone; a *Live is the one a reload swaps.
type Source interface {
	Load() *Catalog
	At(ctx context.Context, version string) (*Catalog, error)
}

// ErrVersionUnknown is returned by At for a catalog version the source
// cannot load.
var ErrVersionUnknown = errors.New("catalog version unknown")

// Load returns c: a loaded catalog never changes.
func (c *Catalog) Load() *Catalog { return c }

// At returns c for its own version, and for the empty version rows from
// before versions were recorded carry.
func (c *Catalog) At(_ context.Context, version string) (*Catalog, error) {
	if version == "" || version == c.hash {
		return c, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrVersionUnknown, version)
}

// Live is the catalog a process serves, swapped whole by a reload. Every
// version it has held stays loadable by At; one it never held is read
// through Fetch (the ledger keeps each version's file).
type Live struct {
	cur atomic.Pointer[Catalog]
	// fetch returns the file of a catalog version; nil means only versions
	// this process held are known.
	fetch func(ctx context.Context, version string) ([]byte, error)

	mu   sync.Mutex
	seen map[string]*Catalog
}

// NewLive returns a Live serving c. fetch reads a version's file from
// where versions are kept, and wraps ErrVersionUnknown when none is kept
// under that version; any other error is taken as passing, so At's caller
// may retry. Optional: nil knows only the versions held here.
func NewLive(c *Catalog, fetch func(ctx context.Context, version string) ([]byte, error)) *Live {
	l := &Live{fetch: fetch, seen: map[string]*Catalog{c.hash: c}}
	l.cur.Store(c)
	return l
}

// Load returns the current catalog.
func (l *Live) Load() *Catalog { return l.cur.Load() }

// Swap makes c the current catalog and returns the one it replaced.
// Requests that already loaded the old one finish with it.
func (l *Live) Swap(c *Catalog) *Catalog {
	l.mu.Lock()
	l.seen[c.hash] = c
	l.mu.Unlock()
	return l.cur.Swap(c)
}

// At returns the catalog of the given version: the current one for the
// empty version, else the version as it was loaded here or as its file was
// recorded. A recorded file is validated again as it loads.
func (l *Live) At(ctx context.Context, version string) (*Catalog, error) {
	if version == "" {
		return l.Load(), nil
	}
	l.mu.Lock()
	c, ok := l.seen[version]
	l.mu.Unlock()
	if ok {
		return c, nil
	}
	if l.fetch == nil {
		return nil, fmt.Errorf("%w: %s", ErrVersionUnknown, version)
	}
	data, err := l.fetch(ctx, version)
	if err != nil {
		return nil, fmt.Errorf("error reading catalog version %s: %w", version, err)
	}
	// A recorded file that no longer loads, or loads as another version,
	// stays so: retrying cannot help.
	if c, err = Load(data); err != nil {
		return nil, fmt.Errorf("%w: %s does not load: %w", ErrVersionUnknown, version, err)
	}
	if c.hash != version {
		return nil, fmt.Errorf("%w: %s: the recorded file hashes to %s", ErrVersionUnknown, version, c.hash)
	}
	l.mu.Lock()
	l.seen[version] = c
	l.mu.Unlock()
	return c, nil
}

// Hash returns the version a catalog file would load as, without loading
// it.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
