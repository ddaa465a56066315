// Package privatefs creates the directories and files dev mode keeps its
// state in (the ledger, Temporal's histories, the codec key) readable by
// their owner only: 0700 and 0600, whatever the process's umask, and
// tightened when they already exist with looser modes from before.
package privatefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

const (
	// DirMode is a private directory's mode.
	DirMode fs.FileMode = 0o700
	// FileMode is a private file's mode.
	FileMode fs.FileMode = 0o600
)

// sqliteCompanions are the files SQLite keeps beside a database; it gives
// each the database file's own mode when it creates them.
var sqliteCompanions = []string{"-wal", "-shm", "-journal"}

// MkdirAll creates dir, and any parent missing, and sets dir to DirMode:
// the mode MkdirAll asks for is cut by the umask only, never raised, and
// a directory that already exists keeps whatever mode it had.
func MkdirAll(dir string) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return fmt.Errorf("error creating directory %s: %w", dir, err)
	}
	if err := os.Chmod(dir, DirMode); err != nil {
		return fmt.Errorf("error making directory %s private: %w", dir, err)
	}
	return nil
}

// SQLiteFile makes sure the SQLite database at path exists with FileMode
// before SQLite opens it: SQLite creates a database file 0644 less the
// umask, but gives its -wal and -shm files the database file's mode, so
// a private database keeps them private too. Companion files already
// there are tightened as well. fresh reports a database with nothing in
// it yet (just created, or left empty by a start that stopped before
// writing its schema).
func SQLiteFile(path string) (fresh bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
	switch {
	case err == nil:
		fresh = true
		if err := f.Close(); err != nil {
			return false, fmt.Errorf("error creating database file %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrExist):
		return false, fmt.Errorf("error creating database file %s: %w", path, err)
	default:
		info, err := os.Stat(path)
		if err != nil {
			return false, fmt.Errorf("error checking database file %s: %w", path, err)
		}
		fresh = info.Size() == 0
	}
	if err := os.Chmod(path, FileMode); err != nil {
		return false, fmt.Errorf("error making database file %s private: %w", path, err)
	}
	for _, suffix := range sqliteCompanions {
		err := os.Chmod(path+suffix, FileMode)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("error making database file %s private: %w", path+suffix, err)
		}
	}
	return fresh, nil
}
