package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/proto"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/codec"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/server"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// TestDevModeEncryptsWithItsOwnKey: dev mode, given no key, draws one into
// its data directory and encrypts its histories with it like production.
func TestDevModeEncryptsWithItsOwnKey(t *testing.T) {
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	dir := t.TempDir()
	d, err := server.Start(t.Context(), server.Config{
		Dev: true, HTTPAddr: "127.0.0.1:0", DataDir: dir, TemporalPort: port,
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Stop(t.Context()) })
	require.Equal(t, codec.DevKeyID, d.Codec().ActiveKeyID())
	info, err := os.Stat(filepath.Join(dir, "codec", codec.DevKeyID+codec.KeyFileSuffix))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "only its owner reads the dev key")

	agent := apiclient.New(d.URL(), tools.DemoAgentKey, apiclient.Options{})
	read, err := agent.Invoke(t.Context(), apitype.InvokeRequest{SessionID: "s1", Tool: "lookup_tenant", OperationKey: "s1:lookup", Args: json.RawMessage(`{"tenant_id":"t_100"}`)})
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, read.State)
	require.Contains(t, string(read.Observation.Payload), "Maria Lopez")

	plain, err := client.Dial(client.Options{HostPort: d.TemporalAddress(), Namespace: d.Namespace(), Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	require.NoError(t, err)
	t.Cleanup(plain.Close)
	hist := history(t.Context(), t, plain, workflows.InvocationWorkflowID("s1:lookup"))
	raw, err := proto.Marshal(hist)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "Maria Lopez", "dev mode's history holds the tenant's name in clear")
	requireEveryPayloadEncrypted(t.Context(), t, "dev", hist)

	require.NoError(t, proxy.VisitPayloads(t.Context(), hist, proxy.VisitPayloadsOptions{
		Visitor: func(_ *proxy.VisitPayloadsContext, p []*commonpb.Payload) ([]*commonpb.Payload, error) {
			return d.Codec().Decode(p)
		},
		SkipSearchAttributes: true,
	}))
	decoded, err := proto.Marshal(hist)
	require.NoError(t, err)
	require.True(t, bytes.Contains(decoded, []byte("Maria Lopez")), "decoded with the dev key, the name is there")
}
