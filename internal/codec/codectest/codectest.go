// Package codectest makes codecs for tests, each under a fresh random key,
// so that test histories are encrypted as production's are.
package codectest

import (
	"crypto/rand"
	"encoding/base64"

	"github.com/maestro-run/maestro/internal/codec"
)

// New returns a codec with one fresh key, whose ID is id.
func New(id string) *codec.Codec {
	c, err := codec.New(id, map[string][]byte{id: Key()})
	if err != nil {
		panic(err)
	}
	return c
}

// Key draws a fresh AES-256 key.
func Key() []byte {
	k := make([]byte, codec.KeySize)
	if _, err := rand.Read(k); err != nil {
		panic(err)
	}
	return k
}

// Env is a MAESTRO_CODEC_KEYS value holding one fresh key named id.
func Env(id string) string {
	return id + "=" + base64.StdEncoding.EncodeToString(Key())
}
