package main

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/eval"
	"github.com/maestro-run/maestro/internal/codec"
	"github.com/maestro-run/maestro/internal/codec/codectest"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// backOffice stands in for a team's existing HTTP API: the service the
// starter catalog's tools call.
func backOffice(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/customers/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"id": r.PathValue("id"), "name": "Ada Lovelace"})
	})
	mux.HandleFunc("POST /v1/tickets", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"id": "tk_1", "status": "open"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCatalogInitStartsProduction writes a catalog with catalog init, checks
// it passes the fence, starts a production-mode maestro on it (PostgreSQL,
// an external Temporal, real connectors), and uses the printed keys.
func TestCatalogInitStartsProduction(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	out, errOut, code := run(t, "catalog", "init", path, "--json")
	require.Equal(t, 0, code, errOut)
	var keys catalogKeys
	require.NoError(t, json.Unmarshal([]byte(out), &keys))
	require.Equal(t, path, keys.Path)
	require.NotEqual(t, keys.AgentKey, keys.OperatorKey)

	text, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(text), keys.AgentKey, "the catalog stores only the key's hash")
	require.NotContains(t, string(text), keys.OperatorKey)
	require.Contains(t, string(text), tools.HashKey(keys.AgentKey))
	require.Contains(t, string(text), tools.HashKey(keys.OperatorKey))
	catalog, err := tools.LoadFile(path)
	require.NoError(t, err)
	require.Empty(t, eval.FenceCatalog(catalog))

	temporal, err := devtemporal.StartOnFreePort(t.Context(), devtemporal.Config{DataDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = temporal.Stop() })
	providers, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = providers.Close() })

	d, err := server.Start(t.Context(), server.Config{
		HTTPAddr:        "127.0.0.1:0",
		DatabaseURL:     ledgertest.PostgresDSN(t),
		TemporalAddress: temporal.HostPort(),
		CatalogPath:     path,
		TaskQueue:       "catalog-init-" + temporal.HostPort(),
		Codec:           codec.Config{Keys: codectest.Env("catalog-init")},
		Providers: server.Providers{
			Twilio: providers.TwilioConfig(), SES: providers.SESConfig(),
			HTTP: map[string]connectors.HTTPService{"backoffice": {BaseURL: backOffice(t)}},
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Stop(t.Context()) })

	agent := []string{"--server", d.URL(), "--key", keys.AgentKey}
	out, errOut, code = run(t, append(agent, "invocations", "invoke", "lookup_customer",
		"--args", `{"customer_id":"c_1"}`, "--session", "s1", "--operation-key", "s1:lookup", "--json")...)
	require.Equal(t, 0, code, out+errOut)
	var read apitype.Invocation
	require.NoError(t, json.Unmarshal([]byte(out), &read))
	require.Equal(t, mt.InvocationSucceeded, read.State)
	require.Contains(t, string(read.Observation.Payload), "Ada Lovelace")

	out, errOut, code = run(t, append(agent, "invocations", "invoke", "create_ticket",
		"--args", `{"customer_id":"c_1","summary":"Router keeps rebooting"}`, "--session", "s1", "--operation-key", "s1:ticket", "--json")...)
	require.Equal(t, 0, code, out+errOut)
	var gated apitype.Invocation
	require.NoError(t, json.Unmarshal([]byte(out), &gated))
	require.Equal(t, mt.InvocationAwaitingApproval, gated.State)

	ops := []string{"--server", d.URL(), "--key", keys.OperatorKey}
	out, errOut, code = run(t, append(ops, "approvals", "list")...)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, gated.ApprovalID)

	_, errOut, code = run(t, "--server", d.URL(), "--key", tools.DemoAgentKey, "tools", "list")
	require.NotEqual(t, 0, code, "the demo keys open nothing on a catalog written by init")
	require.Contains(t, errOut, string(mt.CodeUnauthorized))
}

func TestCatalogInitRefusesToOverwrite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(path, []byte("mine"), 0o600))

	_, errOut, code := run(t, "catalog", "init", path)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "already exists: pass --force")
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "mine", string(text))

	out, _, code := run(t, "catalog", "init", path, "--force")
	require.Equal(t, 0, code)
	require.Contains(t, out, "agent key:")
	_, err = tools.LoadFile(path)
	require.NoError(t, err)
}

func TestCatalogInitToStdoutPrintsKeysOnStderr(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "catalog", "init")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "agent key:    maestro_agent_")
	require.Contains(t, errOut, "operator key: maestro_ops_")
	require.NotContains(t, out, "maestro_agent_", "stdout is the catalog alone, so it can be redirected to a file")
	_, err := tools.Load([]byte(out))
	require.NoError(t, err)
}

// TestCatalogGuideExampleLoads keeps the worked example in docs/catalog.md
// true: its rows, added to a starter catalog, load and pass the fence.
func TestCatalogGuideExampleLoads(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile("../../docs/catalog.md")
	require.NoError(t, err)
	_, example, ok := strings.Cut(string(guide), "## Worked example")
	require.True(t, ok)
	_, block, ok := strings.Cut(example, "```yaml\n")
	require.True(t, ok)
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	var rows strings.Builder
	for line := range strings.Lines(block) {
		rows.WriteString("  " + strings.TrimPrefix(line, "   "))
	}

	_, catalog, err := newStarterCatalog()
	require.NoError(t, err)
	catalog = strings.Replace(catalog, "      - create_ticket\n", "      - create_ticket\n      - hold_order\n", 1)
	catalog += "\n" + rows.String()
	c, err := tools.Load([]byte(catalog))
	require.NoError(t, err, catalog)
	hold, ok := c.Tool("hold_order")
	require.True(t, ok)
	require.Equal(t, mt.RouteCompensable, hold.Route())
	release, ok := c.Tool("release_order_hold")
	require.True(t, ok)
	require.Equal(t, mt.RouteGated, release.Route())
	require.Empty(t, eval.FenceCatalog(c))
}

// The operator init writes is the deployment's first: it may do every
// operator action, so nothing needs a second catalog to get started.
func TestCatalogInitOperatorMayDoEverything(t *testing.T) {
	t.Parallel()
	_, text, err := newStarterCatalog()
	require.NoError(t, err)
	catalog, err := tools.Load([]byte(text))
	require.NoError(t, err)
	op, ok := catalog.Operator("operator")
	require.True(t, ok)
	for _, perm := range []tools.Permission{tools.PermDecodePayloads, tools.PermReloadCatalog, tools.PermRunCanary,
		tools.PermSettleReconciliations, tools.PermVouchFacts} {
		require.True(t, catalog.Permits(op, perm), perm)
	}
}
