package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/codec"
	"github.com/maestro-run/maestro/internal/codec/codectest"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/syncbuf"
	"github.com/maestro-run/maestro/tools"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// proxyTo forwards every connection accepted on addr to target, standing in
// for a PostgreSQL that comes up late.
func proxyTo(t *testing.T, addr, target string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c) }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
}

func readyz(t *testing.T, base string) (int, apitype.Readiness) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return 0, apitype.Readiness{}
	}
	defer resp.Body.Close()
	var r apitype.Readiness
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	return resp.StatusCode, r
}

// TestStartWaitsForDependenciesThatComeUpLater starts production mode before
// PostgreSQL and Temporal: the API listens at once, /readyz names what is
// missing as each comes up, and maestro serves once both answer.
func TestStartWaitsForDependenciesThatComeUpLater(t *testing.T) {
	t.Parallel()
	dsn, err := url.Parse(ledgertest.PostgresDSN(t))
	require.NoError(t, err)
	postgres := dsn.Host
	dsn.Host = freeAddr(t) // nothing listens there yet
	temporalPort, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	httpAddr := freeAddr(t)
	base := "http://" + httpAddr
	// Outside dev mode the demo catalog's published keys are refused.
	const agentKey = "readiness-agent-key"
	doc, err := tools.ReplacingDemoKeys(tools.DemoCatalogYAML, agentKey, "readiness-ops-key")
	require.NoError(t, err)
	catalog := filepathIn(t, "catalog.yaml", doc)

	providers, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = providers.Close() })

	var logs syncbuf.Buffer
	type started struct {
		d   *server.Server
		err error
	}
	done := make(chan started, 1)
	go func() {
		d, err := server.Start(t.Context(), server.Config{
			HTTPAddr:          httpAddr,
			DatabaseURL:       dsn.String(),
			TemporalAddress:   net.JoinHostPort("127.0.0.1", strconv.Itoa(temporalPort)),
			CatalogPath:       catalog,
			Providers:         server.Providers{Twilio: providers.TwilioConfig(), SES: providers.SESConfig(), HTTP: providers.HTTPServices()},
			DependencyTimeout: time.Minute,
			Codec:             codec.Config{Keys: codectest.Env("readiness")},
			Logger:            slog.New(slog.NewTextHandler(&logs, nil)),
		})
		done <- started{d, err}
	}()

	require.Eventually(t, func() bool {
		code, r := readyz(t, base)
		return code == http.StatusServiceUnavailable && r.WaitingFor == "postgresql" && r.Detail != ""
	}, 30*time.Second, 20*time.Millisecond, "/readyz names PostgreSQL while it is down")
	health, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	_ = health.Body.Close()
	require.Equal(t, http.StatusOK, health.StatusCode, "/healthz says the process is up")
	_, err = apiclient.New(base, agentKey, apiclient.Options{}).Tools(t.Context())
	require.ErrorContains(t, err, "starting", "the API refuses calls until it is ready")
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), `msg="waiting for PostgreSQL at `+dsn.Host+`" attempt=1`)
	}, 30*time.Second, 20*time.Millisecond, "each attempt is logged")

	proxyTo(t, dsn.Host, postgres)
	require.Eventually(t, func() bool {
		code, r := readyz(t, base)
		return code == http.StatusServiceUnavailable && r.WaitingFor == "temporal"
	}, 30*time.Second, 20*time.Millisecond, "/readyz names Temporal once PostgreSQL answers")

	srv, err := devtemporal.Start(t.Context(), devtemporal.Config{DataDir: t.TempDir(), Port: temporalPort})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })

	var s started
	select {
	case s = <-done:
	case <-time.After(time.Minute):
		t.Fatal("maestro did not finish starting after both dependencies came up")
	}
	require.NoError(t, s.err)
	t.Cleanup(func() { _ = s.d.Stop(context.Background()) })
	require.Equal(t, base, s.d.URL())
	code, r := readyz(t, base)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, apitype.ReadinessReady, r.Status)
	list, err := apiclient.New(base, agentKey, apiclient.Options{}).Tools(t.Context())
	require.NoError(t, err)
	require.NotEmpty(t, list.Tools)
}

func filepathIn(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := t.TempDir() + "/" + name
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}
