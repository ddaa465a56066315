package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/store/storetest"
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
	demo := string(tools.DemoCatalogYAML)
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
		name:    "provider settings missing",
		catalog: demo,
		env: func(t *testing.T) []string {
			return []string{"TWILIO_ACCOUNT_SID="}
		},
		want: []string{
			"error configuring the connectors: twilio: account SID and auth token are required",
			"to fix: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM",
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
			`error configuring the connectors: the catalog names HTTP service "sandbox" (tools cancel_refund, cancel_work_order, create_work_order, delete_tenant_account, issue_refund, lookup_tenant), which has no configured URL: set MAESTRO_HTTP_SERVICE_SANDBOX_URL`,
			"to fix: set TWILIO_ACCOUNT_SID",
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
			dsn, role := storetest.PostgresServiceDSN(t)
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
