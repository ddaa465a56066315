package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/server"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// TestDevModeStateSurvivesRestart starts dev mode, records calls, stops it,
// and starts it again on the same data directory: the ledger and the
// Temporal state are both still there, and a gated call is still waiting.
func TestDevModeStateSurvivesRestart(t *testing.T) {
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	cfg := server.Config{
		Dev:          true,
		HTTPAddr:     "127.0.0.1:0",
		DataDir:      t.TempDir(),
		TemporalPort: port,
		Logger:       slog.New(slog.DiscardHandler),
	}
	ctx := t.Context()

	d, err := server.Start(ctx, cfg)
	require.NoError(t, err)
	agent := apiclient.New(d.URL(), tools.DemoAgentKey, apiclient.Options{})
	read, err := agent.Invoke(ctx, apitype.InvokeRequest{SessionID: "s1", Tool: "lookup_tenant", OperationKey: "s1:lookup", Args: json.RawMessage(`{"tenant_id":"t_100"}`)})
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, read.State)
	gated, err := agent.Invoke(ctx, apitype.InvokeRequest{SessionID: "s1", Tool: "delete_tenant_account", OperationKey: "s1:delete", Args: json.RawMessage(`{"tenant_id":"t_101"}`)})
	require.NoError(t, err)
	require.True(t, gated.Pending)
	require.NoError(t, d.Stop(ctx))

	d, err = server.Start(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Stop(t.Context()) })
	agent = apiclient.New(d.URL(), tools.DemoAgentKey, apiclient.Options{})

	got, err := agent.Invocation(ctx, read.InvocationID)
	require.NoError(t, err)
	require.Equal(t, read.Observation, got.Observation)
	again, err := agent.Invoke(ctx, apitype.InvokeRequest{SessionID: "s1", Tool: "lookup_tenant", OperationKey: "s1:lookup", Args: json.RawMessage(`{"tenant_id":"t_100"}`)})
	require.NoError(t, err)
	require.Equal(t, read.InvocationID, again.InvocationID, "the ledger answers duplicates across restarts")
	stillGated, err := agent.Invocation(ctx, gated.InvocationID)
	require.NoError(t, err)
	require.True(t, stillGated.Pending)
	require.Equal(t, mt.InvocationAwaitingApproval, stillGated.State)
}

// The banner names the keys, the MCP endpoint, and where each agent's
// voice platform reaches maestro.
func TestBannerTellsHowToReachDevMode(t *testing.T) {
	t.Setenv("BANNER_ELEVENLABS_SECRET", "banner-secret")
	catalog := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(catalog, []byte(strings.Replace(string(tools.DemoCatalogYAML), "    on_failure: none\n",
		"    on_failure: none\n    platform:\n      kind: elevenlabs\n      secret_env: BANNER_ELEVENLABS_SECRET\n", 1)), 0o600))
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	d, err := server.Start(t.Context(), server.Config{
		Dev: true, HTTPAddr: "127.0.0.1:0", DataDir: t.TempDir(), TemporalPort: port, CatalogPath: catalog,
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Stop(t.Context()) })

	var out bytes.Buffer
	d.PrintBanner(&out)
	require.Contains(t, out.String(), tools.DemoAgentKey)
	require.Contains(t, out.String(), tools.DemoOpsKey)
	require.Contains(t, out.String(), "curl -s -H 'Authorization: Bearer "+tools.DemoAgentKey+"'")
	require.Contains(t, out.String(), "--namespace "+d.Namespace()+" --workflow-id")
	require.Contains(t, out.String(), "--codec-endpoint '"+d.URL()+"/codec/{namespace}' --codec-auth 'Bearer "+tools.DemoOpsKey+"'")
	require.Contains(t, out.String(), d.URL()+"/v1/invocations")
	require.Contains(t, out.String(), "mcp:       "+d.URL()+"/mcp ")
	require.Contains(t, out.String(), "voice-agent (elevenlabs)")
	require.Contains(t, out.String(), "tools:  "+d.URL()+"/v1/platforms/elevenlabs/voice-agent/tools/{tool}")
	require.Contains(t, out.String(), "events: "+d.URL()+"/v1/platforms/elevenlabs/voice-agent/post-call")
	require.NotContains(t, out.String(), "banner-secret", "secrets are never printed")
}

func TestProductionModeNeedsItsServices(t *testing.T) {
	_, err := server.Start(t.Context(), server.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.ErrorContains(t, err, "DATABASE_URL is required")
	require.ErrorContains(t, err, "TEMPORAL_ADDRESS is required")
	require.ErrorContains(t, err, "MAESTRO_CATALOG is required")
}

func TestPublicURLMustBeABaseURL(t *testing.T) {
	for _, bad := range []string{"maestro.example.com", "ftp://maestro.example.com", "https://", "https://maestro.example.com/?x=1", "https://u:p@maestro.example.com"} {
		_, err := server.Start(t.Context(), server.Config{Dev: true, PublicURL: bad, Logger: slog.New(slog.DiscardHandler)})
		require.ErrorContains(t, err, "MAESTRO_PUBLIC_URL must be an http(s) base URL", bad)
	}
}

func TestBadTranscriptSettingsAreRefusedAtStart(t *testing.T) {
	t.Parallel()
	_, err := server.Start(t.Context(), server.Config{
		Dev:                true,
		DataDir:            t.TempDir(),
		TranscriptHosts:    []string{"https://transcripts.example.com/calls"},
		TranscriptMaxBytes: 64 << 20,
		Logger:             slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.ErrorContains(t, err, `transcript host "https://transcripts.example.com/calls"`)
	require.ErrorContains(t, err, "below Temporal's payload limit")
}

// TestPostgresLedgerRunsAsTheServiceRole starts maestro on PostgreSQL: it
// migrates as the owner and leaves the service role unable to rewrite
// approval history, while calls still go through.
func TestPostgresLedgerRunsAsTheServiceRole(t *testing.T) {
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	dsn, role := ledgertest.PostgresServiceDSN(t)
	ctx := t.Context()
	d, err := server.Start(ctx, server.Config{
		Dev:                 true,
		HTTPAddr:            "127.0.0.1:0",
		DataDir:             t.TempDir(),
		TemporalPort:        port,
		DatabaseURL:         dsn,
		DatabaseServiceRole: role,
		Logger:              slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Stop(context.Background()) })

	agent := apiclient.New(d.URL(), tools.DemoAgentKey, apiclient.Options{})
	gated, err := agent.Invoke(ctx, apitype.InvokeRequest{SessionID: "s1", Tool: "delete_tenant_account", OperationKey: "s1:delete", Args: json.RawMessage(`{"tenant_id":"t_101"}`)})
	require.NoError(t, err)
	require.True(t, gated.Pending, "the approval request and its event were written as the service role")

	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	for privilege, want := range map[string]bool{"SELECT": true, "INSERT": true, "UPDATE": false, "DELETE": false, "TRUNCATE": false} {
		var got bool
		require.NoError(t, conn.QueryRow(ctx, "SELECT has_table_privilege($1, 'approval_events', $2)", role, privilege).Scan(&got))
		require.Equal(t, want, got, "%s on approval_events", privilege)
	}
}

func TestBadTrustedProxiesAreRefusedAtStart(t *testing.T) {
	t.Setenv("MAESTRO_TRUSTED_PROXIES", "10.0.0.0/8, proxy.internal")
	cfg := server.FromEnv()
	cfg.Dev, cfg.DataDir, cfg.Logger = true, t.TempDir(), slog.New(slog.DiscardHandler)
	_, err := server.Start(t.Context(), cfg)
	require.ErrorContains(t, err, `MAESTRO_TRUSTED_PROXIES: "proxy.internal" is neither an IP address nor a CIDR prefix`)
}
