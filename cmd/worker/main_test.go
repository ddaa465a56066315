package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/codec/codectest"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/syncbuf"
	"github.com/maestro-run/maestro/tools"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// maestroBinary builds this command once for every test that runs it.
func maestroBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "maestro-bin-"); buildErr != nil {
			return
		}
		binary = filepath.Join(buildDir, "maestro")
		out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("error building maestro: %w\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binary
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func writeCatalog(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// TestBadStartsExplainThemselves starts the real binary with each mistake a
// new user makes and checks it says what failed and how to fix it, exits
// non-zero, and never panics.
func TestBadStartsExplainThemselves(t *testing.T) {
	t.Parallel()
	// Outside dev mode maestro refuses the demo catalog's published keys.
	rekeyed, err := tools.ReplacingDemoKeys(tools.DemoCatalogYAML, "test-agent-key", "test-ops-key")
	require.NoError(t, err)
	demo := string(rekeyed)
	const deferredWording = "I'll make sure the team gets your message."
	require.Contains(t, demo, deferredWording)

	cases := []struct {
		name    string
		catalog string
		env     func(t *testing.T) []string
		want    []string
	}{{
		name:    "record-deferred wording claims the effect",
		catalog: strings.Replace(demo, deferredWording, "I've sent your message to the team.", 1),
		want: []string{
			"error loading the catalog",
			`tools[8] "take_message": wording.success: record-deferred wording must be future or neutral tense`,
			"to fix: correct every row and field named above (docs/catalog.md describes them)",
		},
	}, {
		name:    "unparsable YAML after a valid catalog",
		catalog: demo + "\ntools: [\n  - {name: broken\n",
		want: []string{
			"error loading the catalog",
			"error parsing tool catalog: yaml: line",
			"to fix: correct every row and field named above",
		},
	}, {
		name:    "catalog file missing",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"MAESTRO_CATALOG=" + filepath.Join(t.TempDir(), "nope.yaml")}
		},
		want: []string{
			"error loading the catalog",
			"no such file or directory",
			"to fix: check the path given with --catalog (MAESTRO_CATALOG), or write a catalog with `starter catalog init`",
		},
	}, {
		name:    "production settings missing",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"DATABASE_URL=", "TEMPORAL_ADDRESS=", "MAESTRO_CATALOG="}
		},
		want: []string{
			"error checking the configuration",
			"DATABASE_URL is required outside dev mode (or pass --dev)",
			"TEMPORAL_ADDRESS is required outside dev mode (or pass --dev)",
			"MAESTRO_CATALOG is required outside dev mode (or pass --dev)",
		},
	}, {
		name:    "platform budget longer than the drain window",
		catalog: withElevenLabsAgent(demo, "40s"),
		env: func(t *testing.T) []string {
			return []string{"MAESTRO_DRAIN_TIMEOUT=20s"}
		},
		want: []string{
			"error checking the catalog",
			`agents[0] "el-agent": platform.async_budget: 40s is answered up to 45s after a call arrives, but --drain-timeout (MAESTRO_DRAIN_TIMEOUT) is 20s`,
			"to fix: raise --drain-timeout (MAESTRO_DRAIN_TIMEOUT) to the length named above",
		},
	}, {
		name:    "unknown role",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"MAESTRO_ROLE=both"}
		},
		want: []string{
			"error checking the configuration",
			`--role (MAESTRO_ROLE) must be all, api or worker, got "both"`,
		},
	}, {
		name:    "client certificate without its key",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"TEMPORAL_TLS_CERT_PATH=" + filepath.Join(t.TempDir(), "client.pem")}
		},
		want: []string{
			"error checking the configuration",
			"TEMPORAL_TLS_CERT_PATH is set but TEMPORAL_TLS_KEY_PATH is not: mutual TLS needs both",
		},
	}, {
		name:    "codec keys missing",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"MAESTRO_CODEC_KEYS=", "MAESTRO_CODEC_KEY_DIR="}
		},
		want: []string{
			"error checking the configuration",
			"MAESTRO_CODEC_KEYS or MAESTRO_CODEC_KEY_DIR is required outside dev mode",
		},
	}, {
		name:    "codec key too short",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"MAESTRO_CODEC_KEYS=k1=c2hvcnQ="}
		},
		want: []string{
			"error loading the codec keys",
			`codec key "k1" is 5 bytes: AES-256 needs exactly 32`,
			"to fix: give each key as MAESTRO_CODEC_KEYS=",
		},
	}, {
		name:    "codec active key unknown",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"MAESTRO_CODEC_ACTIVE_KEY=k9"}
		},
		want: []string{
			"error loading the codec keys",
			`the active codec key "k9" is not among the loaded keys ["test"]`,
		},
	}, {
		name:    "codec UI origin has a path",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"MAESTRO_CODEC_CORS_ORIGIN=https://temporal.example.com/ui"}
		},
		want: []string{
			"error checking the configuration",
			"MAESTRO_CODEC_CORS_ORIGIN must be an origin such as https://temporal.example.com",
		},
	}, {
		name:    "provider settings missing",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"TWILIO_ACCOUNT_SID="}
		},
		want: []string{
			"error configuring the connectors: TWILIO_ACCOUNT_SID is not set, and the catalog's tools escalate_to_human, request_callback, send_sms need it",
			"to fix: set the variables named above",
		},
	}, {
		name:    "demo keys outside dev mode",
		catalog: string(tools.DemoCatalogYAML),
		want: []string{
			"error checking the catalog",
			`the demo keys published with maestro (demo-agent-key, demo-ops-key) authenticate agent "voice-agent" and operator "demo-manager"; they are accepted only in dev mode`,
			"to fix: give each its own key: `starter keys new` prints a fresh key and its sha256",
		},
	}, {
		name:    "only one of the SES static keys",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"AWS_SECRET_ACCESS_KEY="}
		},
		want: []string{
			"error configuring the connectors: ses: set both the access key ID and the secret access key, or neither to use the AWS default credential chain",
		},
	}, {
		// Every call of the sandbox's tools would fail, and the agent
		// would be blamed for a fault of maestro's configuration.
		name:    "HTTP service the catalog names has no URL",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"MAESTRO_HTTP_SERVICE_SANDBOX_URL="}
		},
		want: []string{
			"error configuring the connectors: MAESTRO_HTTP_SERVICE_SANDBOX_URL is not set, and the catalog's tools cancel_refund, cancel_work_order, create_work_order, delete_tenant_account, issue_refund, lookup_tenant need it",
			"to fix: set the variables named above",
		},
	}, {
		name:    "PostgreSQL unreachable",
		catalog: demo,
		want: []string{
			"error opening the ledger: PostgreSQL at",
			"did not answer within 1s",
			"last error: error connecting to postgres",
			"to fix: check that PostgreSQL is running and reachable at",
			"raise --dependency-timeout (MAESTRO_DEPENDENCY_TIMEOUT)",
		},
	}, {
		name:    "Temporal unreachable",
		catalog: demo,
		env: func(t *testing.T) []string {
			dsn, role := ledgertest.PostgresServiceDSN(t)
			return []string{"DATABASE_URL=" + dsn, "MAESTRO_DATABASE_SERVICE_ROLE=" + role}
		},
		want: []string{
			"error connecting to Temporal: Temporal at",
			"did not answer within 1s",
			"to fix: check that the Temporal frontend is running and reachable at",
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			temporalAddr := closedPort(t)
			env := []string{
				"DATABASE_URL=postgres://postgres@" + closedPort(t) + "/test?sslmode=disable",
				"TEMPORAL_ADDRESS=" + temporalAddr,
				"MAESTRO_CATALOG=" + writeCatalog(t, tc.catalog),
				"MAESTRO_DEPENDENCY_TIMEOUT=1s",
				"MAESTRO_HTTP_ADDR=127.0.0.1:0",
				// Provider settings are checked before the wait for
				// PostgreSQL and Temporal; these pass that check.
				"TWILIO_ACCOUNT_SID=AC00000000000000000000000000000000",
				"TWILIO_AUTH_TOKEN=test-token",
				"TWILIO_FROM=+15550100000",
				"SES_REGION=us-east-1",
				"SES_FROM=maestro@example.com",
				"AWS_ACCESS_KEY_ID=test-key",
				"AWS_SECRET_ACCESS_KEY=test-secret",
				"MAESTRO_HTTP_SERVICE_SANDBOX_URL=http://" + closedPort(t),
				"MAESTRO_CODEC_KEYS=" + codectest.Env("test"),
			}
			if tc.env != nil {
				env = append(env, tc.env(t)...) // later entries win
			}
			cmd := exec.CommandContext(t.Context(), maestroBinary(t))
			cmd.Env = append(os.Environ(), env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()

			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "maestro must exit with an error, got %v\nstderr:\n%s", err, stderr.String())
			require.Equal(t, 1, exit.ExitCode(), stderr.String())
			for _, w := range tc.want {
				require.Contains(t, stderr.String(), w)
			}
			require.NotContains(t, stderr.String(), "goroutine ")
			require.NotContains(t, stderr.String(), "panic:")
			require.NotContains(t, stdout.String(), "maestro is serving")
		})
	}
}

// TestSIGTERMDrainsAndExits starts dev mode and sends it SIGTERM: it
// drains, says so, and exits 0.
func TestSIGTERMDrainsAndExits(t *testing.T) {
	t.Parallel()
	cmd, stderr, _ := startDev(t, "--drain-timeout", "20s")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), stderr.String())
	require.Contains(t, stderr.String(), "draining: finishing the work in flight, taking no more")
	require.Contains(t, stderr.String(), "stopping the worker: activities in flight may finish")
	require.Contains(t, stderr.String(), "msg=stopped")
}

// TestSIGHUPReloadsTheCatalogFile starts dev mode on a catalog file, then
// rewrites it and sends SIGHUP: a broken file is refused and logged with
// its violations, and a good one is swapped in.
func TestSIGHUPReloadsTheCatalogFile(t *testing.T) {
	t.Parallel()
	path := writeCatalog(t, string(tools.DemoCatalogYAML))
	cmd, stderr, _ := startDev(t, "--catalog", path)

	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(tools.DemoCatalogYAML), "effect: read", "effect: sometimes", 1)), 0o600))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "catalog reload refused") }, time.Minute, 20*time.Millisecond, stderr.String())
	require.Contains(t, stderr.String(), `lookup_tenant\": effect`, "the violation is named")

	good := string(tools.DemoCatalogYAML) + "\n# reloaded\n"
	require.NoError(t, os.WriteFile(path, []byte(good), 0o600))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	want := "msg=\"catalog reloaded\" version=" + tools.Hash([]byte(good))
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), want) }, time.Minute, 20*time.Millisecond, stderr.String())

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), stderr.String())
}

// startDev starts the binary in dev mode on free ports with args added,
// and returns once it says it is serving, with its stderr and its stdout
// (the banner, printed in full shortly after).
func startDev(t *testing.T, args ...string) (*exec.Cmd, *syncbuf.Buffer, *syncbuf.Buffer) {
	t.Helper()
	cmd, stderr, banner, _ := startDevWith(t, nil, args...)
	return cmd, stderr, banner
}

// startDevWith is startDev with env added to the environment; it also
// returns the URL the API serves on.
func startDevWith(t *testing.T, env []string, args ...string) (*exec.Cmd, *syncbuf.Buffer, *syncbuf.Buffer, string) {
	t.Helper()
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	args = append([]string{"--dev", "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--temporal-port", strconv.Itoa(port)}, args...)
	cmd := exec.CommandContext(t.Context(), maestroBinary(t), args...)
	// Dev mode keeps its ledger in the data directory unless DATABASE_URL
	// names one: unset, each run has a ledger of its own, and no run reads
	// the calls of another.
	cmd.Env = append(append(os.Environ(), "DATABASE_URL="), env...)
	stderr, banner := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	// The scan ends when the process closes its stdout, so a process that
	// exits before serving fails the test at once instead of at its
	// deadline.
	serving, exited := make(chan struct{}), make(chan struct{})
	var url string
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stdout)
		for served := false; sc.Scan(); {
			_, _ = fmt.Fprintln(banner, sc.Text())
			if rest, ok := strings.CutPrefix(sc.Text(), "maestro is serving on "); ok && !served {
				url, served = strings.TrimSpace(rest), true
				close(serving)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case <-serving:
	case <-exited:
		select {
		case <-serving:
		default:
			t.Fatalf("maestro exited before serving:\n%s", stderr.String())
		}
	case <-t.Context().Done():
		t.Fatalf("maestro did not start:\n%s", stderr.String())
	}
	return cmd, stderr, banner, url
}
