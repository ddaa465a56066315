package devtemporal_test

import (
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/devtemporal"
)

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	got := devtemporal.Config{DataDir: "data"}.WithDefaults()
	require.Equal(t, "data", got.DataDir)
	require.Equal(t, "default", got.Namespace)
	require.Equal(t, "127.0.0.1", got.Host)
	require.Equal(t, 7233, got.Port)
	require.NotNil(t, got.Logger)

	logger := slog.New(slog.DiscardHandler)
	set := devtemporal.Config{Namespace: "ns", Host: "::1", Port: 9000, Logger: logger}
	require.Equal(t, set, set.WithDefaults())
}

func TestStartRejectsBeforeStarting(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = busy.Close() })

	tests := map[string]struct {
		cfg     devtemporal.Config
		wantErr string
	}{
		"no data dir": {
			cfg:     devtemporal.Config{},
			wantErr: "DataDir is required",
		},
		"host name instead of IP": {
			cfg:     devtemporal.Config{DataDir: t.TempDir(), Host: "localhost"},
			wantErr: "not an IP address",
		},
		"no room for the derived ports": {
			cfg:     devtemporal.Config{DataDir: t.TempDir(), Port: 65534},
			wantErr: "leaves no room",
		},
		"port in use": {
			cfg:     devtemporal.Config{DataDir: t.TempDir(), Port: busy.Addr().(*net.TCPAddr).Port},
			wantErr: "error reserving " + busy.Addr().String(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, err := devtemporal.Start(t.Context(), tc.cfg)
			require.ErrorContains(t, err, tc.wantErr)
			require.Nil(t, srv)
			if name == "port in use" {
				require.ErrorIs(t, err, devtemporal.ErrPortTaken, "a caller may retry on other ports")
			}
		})
	}
}
