package codec

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/maestro-run/maestro/internal/privatefs"
)

// DevKeyID is the ID of dev mode's key.
const DevKeyID = "dev"

// DevKeyDir makes sure dir holds a key and returns a Config reading it.
// Dev mode draws its own random key on first start and keeps it beside
// its Temporal data, so its histories are encrypted like production's
// and still decode after a restart; no key is built into the binary, so
// there is none a production deployment could fall back on.
func DevKeyDir(dir string) (Config, error) {
	cfg := Config{KeyDir: dir, ActiveKey: DevKeyID}
	path := filepath.Join(dir, DevKeyID+KeyFileSuffix)
	if err := privatefs.MkdirAll(dir); err != nil {
		return Config{}, fmt.Errorf("error creating dev codec key directory: %w", err)
	}
	if _, err := os.Stat(path); err == nil {
		// A key written by an older build may be readable by others.
		if err := os.Chmod(path, privatefs.FileMode); err != nil {
			return Config{}, fmt.Errorf("error making dev codec key private: %w", err)
		}
		return cfg, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Config{}, fmt.Errorf("error checking dev codec key: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return Config{}, fmt.Errorf("error drawing dev codec key: %w", err)
	}
	// O_EXCL: a concurrent start that got there first keeps its key.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, privatefs.FileMode)
	if errors.Is(err, fs.ErrExist) {
		return cfg, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("error creating dev codec key: %w", err)
	}
	_, err = f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Config{}, fmt.Errorf("error writing dev codec key: %w", err)
	}
	return cfg, nil
}
