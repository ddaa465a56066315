package codec

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// KeyFileSuffix ends the name of each key file in a key directory; the
// file's name before it is the key's ID.
const KeyFileSuffix = ".key"

// Config says where the keys are. Keys never live in the catalog: it is
// checked in and read by people who must not read call data.
type Config struct {
	// Keys lists keys inline as "id=base64key,id2=base64key"
	// (MAESTRO_CODEC_KEYS). Optional if KeyDir holds keys.
	Keys string
	// KeyDir is a directory of key files, each "<id>.key" holding a
	// base64 key; other files are ignored, so a mounted Kubernetes secret
	// works as is (MAESTRO_CODEC_KEY_DIR). Optional if Keys is set.
	KeyDir string
	// ActiveKey is the ID of the key new payloads are encrypted under
	// (MAESTRO_CODEC_ACTIVE_KEY). Optional: default the only key, when
	// exactly one is loaded.
	ActiveKey string
}

// Empty reports whether c names no key at all.
func (c Config) Empty() bool { return strings.TrimSpace(c.Keys) == "" && c.KeyDir == "" }

// Load reads the keys c names and builds the codec.
func Load(c Config) (*Codec, error) {
	keys := map[string][]byte{}
	if err := parseInline(c.Keys, keys); err != nil {
		return nil, err
	}
	if c.KeyDir != "" {
		if err := readDir(c.KeyDir, keys); err != nil {
			return nil, err
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no codec key is configured: set MAESTRO_CODEC_KEYS or MAESTRO_CODEC_KEY_DIR")
	}
	active := c.ActiveKey
	if active == "" {
		if len(keys) > 1 {
			return nil, errors.New("several codec keys are loaded: name the one to encrypt with in MAESTRO_CODEC_ACTIVE_KEY")
		}
		for id := range keys {
			active = id
		}
	}
	return New(active, keys)
}

func parseInline(s string, keys map[string][]byte) error {
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, b64, ok := strings.Cut(entry, "=")
		if !ok {
			return fmt.Errorf("MAESTRO_CODEC_KEYS entry %q is not id=base64key", redact(entry))
		}
		key, err := decodeKey(id, b64)
		if err != nil {
			return err
		}
		if err := add(keys, strings.TrimSpace(id), key); err != nil {
			return err
		}
	}
	return nil
}

func readDir(dir string, keys map[string][]byte) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("error reading codec key directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, KeyFileSuffix) || strings.HasPrefix(name, ".") {
			continue
		}
		// os.ReadFile follows symbolic links, as a mounted secret's are.
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("error reading codec key file: %w", err)
		}
		id := strings.TrimSuffix(name, KeyFileSuffix)
		key, err := decodeKey(id, string(b))
		if err != nil {
			return fmt.Errorf("codec key file %s: %w", name, err)
		}
		if err := add(keys, id, key); err != nil {
			return err
		}
	}
	return nil
}

func decodeKey(id, b64 string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return nil, fmt.Errorf("codec key %q is not base64 (make one with: openssl rand -base64 32): %w", strings.TrimSpace(id), err)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("codec key %q is %d bytes: AES-256 needs exactly %d (make one with: openssl rand -base64 32)", strings.TrimSpace(id), len(key), KeySize)
	}
	return key, nil
}

func add(keys map[string][]byte, id string, key []byte) error {
	if err := validKeyID(id); err != nil {
		return err
	}
	if prev, ok := keys[id]; ok && !bytes.Equal(prev, key) {
		return fmt.Errorf("codec key %q is given twice with different values", id)
	}
	keys[id] = key
	return nil
}

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func validKeyID(id string) error {
	if !keyIDPattern.MatchString(id) {
		return fmt.Errorf("codec key ID %q must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}

// redact keeps a malformed entry's shape for the error without echoing a
// key that may be in it.
func redact(entry string) string {
	if len(entry) > 8 {
		return entry[:4] + "…"
	}
	return "…"
}
