package store

import (
	"crypto/rand"
	"encoding/hex"
)

// newID returns prefix, an underscore and 16 random hex digits. 64 random
// bits keep collisions out of reach at any volume one ledger sees, and the
// ID stays short enough to read out on an incident call.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	return prefix + "_" + hex.EncodeToString(b[:])
}

// idOr returns id, or a new ID with prefix when id is empty.
func idOr(id, prefix string) string {
	if id != "" {
		return id
	}
	return newID(prefix)
}
