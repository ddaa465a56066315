package ledger

import (
	"crypto/rand"
	"encoding/hex"
)

// newID returns prefix, an underscore and 16 random hex digits. 64 random
// bits keep collisions out of reach at any volume one ledger sees, and the
// ID stays short enough to read out on an incident call.
func newID(prefix string) string {
	return randomID(prefix, 8)
}

// newTokenID returns "tok_" and 32 random hex digits. A token authorises
// moving money, so its ID gets 128 bits: enough that it cannot be guessed
// should it ever be presented as proof of approval.
func newTokenID() string {
	return randomID("tok", 16)
}

func randomID(prefix string, randomBytes int) string {
	b := make([]byte, randomBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return prefix + "_" + hex.EncodeToString(b)
}

// idOr returns id, or a new ID with prefix when id is empty.
func idOr(id, prefix string) string {
	if id != "" {
		return id
	}
	return newID(prefix)
}
