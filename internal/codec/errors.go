package codec

import "fmt"

// UnknownKeyError is a payload encrypted under a key the keyring does not
// hold: typically a key retired too early, or a process given the wrong
// key set.
type UnknownKeyError struct {
	KeyID string
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("payload is encrypted under key %q, which is not loaded: add it to MAESTRO_CODEC_KEYS or MAESTRO_CODEC_KEY_DIR", e.KeyID)
}
