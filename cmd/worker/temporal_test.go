package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/eval/reality"
	"github.com/maestro-run/maestro/internal/codec/codectest"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/syncbuf"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// TestTemporalOnPostgresServesMaestro runs the temporal subcommand as its
// own process on a fresh pair of databases, points a production-mode
// maestro at it, and makes a call whose effect lands at the stand-in.
func TestTemporalOnPostgresServesMaestro(t *testing.T) {
	t.Parallel()
	pg := uniquePostgres(t)
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	temporal := startLine(t, "ready ", maestroBinary(t), nil, "temporal",
		"--database-url", pg.URL, "--database", pg.Database, "--visibility-database", pg.VisibilityDatabase,
		"--shards", "2", "--port", strconv.Itoa(port))

	sins, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = sins.Close() })
	doc, err := tools.TrustingDeclaredFacts(tools.DemoCatalogYAML)
	require.NoError(t, err)
	doc, err = tools.ReplacingDemoKeys(doc, "cluster-agent-key", "cluster-ops-key")
	require.NoError(t, err)
	dsn, role := ledgertest.PostgresServiceDSN(t)
	env := []string{
		"DATABASE_URL=" + dsn,
		"MAESTRO_DATABASE_SERVICE_ROLE=" + role,
		"TEMPORAL_ADDRESS=" + temporal,
		"MAESTRO_CATALOG=" + writeCatalog(t, string(doc)),
		"MAESTRO_HTTP_ADDR=127.0.0.1:0",
		"MAESTRO_CODEC_KEYS=" + codectest.Env("cluster"),
	}
	for _, v := range reality.StandinVars(sins) {
		env = append(env, v.Name+"="+v.Value)
	}
	url := startLine(t, "maestro is serving on ", maestroBinary(t), env, "--role", "all")

	agent := apiclient.New(url, "cluster-agent-key", apiclient.Options{})
	resp, err := agent.Invoke(t.Context(), apitype.InvokeRequest{
		SessionID:      "cluster-1",
		Tool:           "send_sms",
		Args:           []byte(`{"to":"+14155550100","body":"through the cluster"}`),
		OperationKey:   "cluster-1:0",
		SessionContext: map[string]string{"caller_number": "+14155550100"},
	})
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, resp.Observation.Summary)
	messages := sins.Twilio.Messages()
	require.Len(t, messages, 1)
	require.Equal(t, "through the cluster", messages[0].Body)
}

func TestTemporalSubcommandRefusesBadInput(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args []string
		want string
	}{
		"no database":     {[]string{"temporal"}, "--database-url (or TEMPORAL_DATABASE_URL) or --data-dir is required"},
		"stray argument":  {[]string{"temporal", "--database-url", "postgres://h/db", "now"}, "unexpected arguments: [now]"},
		"bad shard count": {[]string{"temporal", "--database-url", "postgres://h/db", "--shards", "-1"}, "shards must be at least 1, got -1"},
		"unknown flag":    {[]string{"temporal", "--shard", "2"}, "flag provided but not defined: -shard"},
		"both stores": {[]string{"temporal", "--database-url", "postgres://h/db", "--data-dir", "d"},
			"--data-dir and --database-url are exclusive"},
		"bad port": {[]string{"temporal", "--data-dir", "d", "--port", "65534"}, "leaves no room for the 4 ports"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), maestroBinary(t), tc.args...)
			cmd.Env = append(os.Environ(), "TEMPORAL_DATABASE_URL=")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "must exit with an error, got %v", err)
			require.Equal(t, 1, exit.ExitCode())
			require.Contains(t, stderr.String(), tc.want)
		})
	}
}

// uniquePostgres names a database pair no other test uses and drops it
// once the processes using it have stopped.
func uniquePostgres(t *testing.T) devtemporal.Postgres {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = ledgertest.DefaultDatabaseURL
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	suffix := hex.EncodeToString(b)
	pg := devtemporal.Postgres{URL: base, Database: "temporal_" + suffix, VisibilityDatabase: "temporal_visibility_" + suffix}
	t.Cleanup(func() { require.NoError(t, devtemporal.DropPostgres(context.Background(), pg)) })
	return pg
}

// startLine starts bin and returns the rest of the first stdout line that
// starts with prefix. The process is stopped with SIGTERM when the test
// ends; its stderr is shown if it fails to start.
func startLine(t *testing.T, prefix, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				found <- strings.TrimSpace(rest)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case line := <-found:
		return line
	case <-exited:
		t.Fatalf("%s %s exited before %q:\n%s", filepath.Base(bin), args[0], prefix, stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s %s did not print %q within two minutes:\n%s", filepath.Base(bin), args[0], prefix, stderr.String())
	}
	return ""
}
