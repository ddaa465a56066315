package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

const (
	// Encoding is the metadata "encoding" of an encrypted payload.
	Encoding = "binary/encrypted"
	// MetadataKeyID names the metadata field holding the ID of the key a
	// payload is encrypted under.
	MetadataKeyID = "encryption-key-id"
	// KeySize is an AES-256 key's length in bytes.
	KeySize = 32
)

// Codec is a converter.PayloadCodec that encrypts under its active key and
// decrypts under any key it holds.
type Codec struct {
	active string
	aeads  map[string]cipher.AEAD
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New builds a codec from keys by ID; active names the key new payloads
// are encrypted under.
func New(active string, keys map[string][]byte) (*Codec, error) {
	if len(keys) == 0 {
		return nil, errors.New("no codec key is configured")
	}
	c := &Codec{active: active, aeads: make(map[string]cipher.AEAD, len(keys))}
	for id, key := range keys {
		if err := validKeyID(id); err != nil {
			return nil, err
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("codec key %q is %d bytes: AES-256 needs exactly %d", id, len(key), KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("error creating cipher for codec key %q: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("error creating GCM for codec key %q: %w", id, err)
		}
		c.aeads[id] = aead
	}
	if _, ok := c.aeads[active]; !ok {
		return nil, fmt.Errorf("the active codec key %q is not among the loaded keys %q", active, c.KeyIDs())
	}
	return c, nil
}

// ActiveKeyID is the ID of the key new payloads are encrypted under.
func (c *Codec) ActiveKeyID() string { return c.active }

// KeyIDs lists the IDs of every key the codec decrypts with, sorted.
func (c *Codec) KeyIDs() []string { return slices.Sorted(maps.Keys(c.aeads)) }

// Encode encrypts each payload, whole (metadata included), under the
// active key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead := c.aeads[c.active]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("error marshalling payload for encryption: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("error drawing a nonce: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(Encoding),
				MetadataKeyID:              []byte(c.active),
			},
			// The key ID is authenticated too, so a payload relabelled
			// with another key's ID fails rather than decrypting wrongly.
			Data: aead.Seal(nonce, nonce, plain, []byte(c.active)),
		}
	}
	return out, nil
}

// Decode decrypts encrypted payloads and passes the others through as
// they are, so that histories written before encryption still replay.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		aead, ok := c.aeads[id]
		if !ok {
			return nil, &UnknownKeyError{KeyID: id}
		}
		data := p.GetData()
		if len(data) < aead.NonceSize() {
			return nil, fmt.Errorf("error decrypting payload under key %q: ciphertext too short", id)
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
		if err != nil {
			return nil, fmt.Errorf("error decrypting payload under key %q: %w", id, err)
		}
		var decoded commonpb.Payload
		if err := proto.Unmarshal(plain, &decoded); err != nil {
			return nil, fmt.Errorf("error unmarshalling payload decrypted under key %q: %w", id, err)
		}
		out[i] = &decoded
	}
	return out, nil
}
