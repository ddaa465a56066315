package tools

import (
	"crypto/sha256"
	"encoding/hex"
)

// keyBindingLabel separates a key binding from the catalog's own hash, so
// a ledger that stores bindings never holds a value the catalog holds.
const keyBindingLabel = "maestro console session key binding\x00"

// KeyBinding names the operator's key without revealing it, or the hash
// the catalog stores: a console session records it at sign-in and ends
// once the served catalog gives the operator another key, or none. Empty
// for an operator without a key.
func (o *Operator) KeyBinding() string {
	if !o.hasKey {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(keyBindingLabel))
	h.Write(o.key[:])
	return hex.EncodeToString(h.Sum(nil))
}
