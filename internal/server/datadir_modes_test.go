package server_test

import (
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/server"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// TestDevModeDataIsPrivateWhateverTheUmask starts dev mode under umask 0,
// so every mode left to the default would come out world-readable, and
// records a call so the ledger and Temporal have written their -wal and
// -shm files. Every directory under the data directory is 0700 and every
// file 0600. A data directory an older build left open (0755, files 0644)
// is closed again by the next start. Not parallel: the umask is the
// process's.
func TestDevModeDataIsPrivateWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })

	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "data")
	cfg := server.Config{Dev: true, HTTPAddr: "127.0.0.1:0", DataDir: dir, TemporalPort: port, Logger: slog.New(slog.DiscardHandler)}
	run := func(key string) {
		t.Helper()
		d, err := server.Start(t.Context(), cfg)
		require.NoError(t, err)
		defer func() { require.NoError(t, d.Stop(t.Context())) }()
		agent := apiclient.New(d.URL(), tools.DemoAgentKey, apiclient.Options{})
		read, err := agent.Invoke(t.Context(), apitype.InvokeRequest{SessionID: "s1", Tool: "lookup_tenant", OperationKey: key, Args: json.RawMessage(`{"tenant_id":"t_100"}`)})
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, read.State)
		requirePrivate(t, dir, true)
	}
	run("s1:lookup")

	// An older build's data directory: everything readable by all.
	require.NoError(t, filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		require.NoError(t, err)
		mode := fs.FileMode(0o644)
		if e.IsDir() {
			mode = 0o755
		}
		return os.Chmod(path, mode)
	}))
	requirePrivate(t, dir, false)
	run("s1:lookup-again")
}

// requirePrivate checks the modes of everything under dir, and that the
// files each part keeps there are among them.
func requirePrivate(t *testing.T, dir string, want bool) {
	t.Helper()
	var files []string
	open := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := e.Info()
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, path)
		private := fs.FileMode(0o600)
		if e.IsDir() {
			private = 0o700
		} else {
			files = append(files, rel)
		}
		if info.Mode().Perm() != private {
			open++
			if want {
				t.Errorf("%s is %v, want %v", rel, info.Mode().Perm(), private)
			}
		}
		return nil
	}))
	if !want {
		require.NotZero(t, open, "the loosened directory is open")
		return
	}
	for _, f := range []string{"ledger.db", "ledger.db-wal", "temporal/temporal.db", "temporal/visibility.db", "codec/dev.key"} {
		require.Contains(t, files, f)
	}
	t.Logf("private: %v", files)
}
