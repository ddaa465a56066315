package deps

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tagSets are the build tags the module's files are built under; the graph
// is the union of the imports each set selects.
var tagSets = []string{"", "failpoint,crashtest,loadtest"}

// TestImportRules checks the module's real import graph.
func TestImportRules(t *testing.T) {
	t.Parallel()
	module := goList(t, "list", "-m")
	g := Graph{}
	for _, tags := range tagSets {
		out := goList(t, "list", "-deps", "-tags="+tags, "-json=ImportPath,Imports", "./...")
		dec := json.NewDecoder(strings.NewReader(out))
		for {
			var p struct {
				ImportPath string
				Imports    []string
			}
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else {
				require.NoError(t, err)
			}
			g[p.ImportPath] = union(g[p.ImportPath], p.Imports)
		}
	}
	require.Contains(t, g, module+"/workflows", "the graph holds the module's packages")
	if v := Violations(g, module); len(v) > 0 {
		t.Errorf("imports that break the layering (move the code, or go through the API):\n%s", strings.Join(v, "\n"))
	}
}

// TestViolationsBite adds one bad edge at a time to a clean graph and
// checks each rule names it.
func TestViolationsBite(t *testing.T) {
	t.Parallel()
	const m = "example.com/m"
	clean := func() Graph {
		return Graph{
			m + "/workflows":              {"fmt", "time", "go.temporal.io/sdk/workflow", m + "/maestrotype"},
			"go.temporal.io/sdk/workflow": {"net/http"},
			m + "/maestrotype":            {"encoding/json"},
			m + "/cmd/starter":            {m + "/apiclient", "github.com/spf13/cobra"},
			m + "/apiclient":              {m + "/apitype", "net/http"},
			m + "/apitype":                {m + "/maestrotype"},
			m + "/internal/ledger":        {"database/sql", "github.com/jackc/pgx/v5"},
			m + "/internal/server":        {m + "/internal/standin", m + "/internal/ledger"},
			m + "/internal/standin":       {m + "/internal/standin/twilio"},
			m + "/test/faults":            {m + "/internal/standin/fault"},
			m + "/activities":             {m + "/internal/ledger"},
		}
	}
	require.Empty(t, Violations(clean(), m), "the clean graph passes, so each case below fails for its own edge")

	for _, tc := range []struct {
		name     string
		from, to string
		want     string
	}{
		{"WorkflowImportsHTTP", m + "/workflows", "net/http", "workflows imports net/http: workflow code replays from history and may not do I/O"},
		{"WorkflowImportsOS", m + "/workflows", "os", "workflows imports os:"},
		{"WorkflowImportsLedger", m + "/workflows", m + "/internal/ledger", "workflows imports internal/ledger: of this module, workflow code may import only maestrotype"},
		{"WorkflowImportsThirdParty", m + "/workflows", "github.com/google/uuid", "workflows imports github.com/google/uuid: workflow code may import only the standard library"},
		{"WorkflowReachesDatabase", m + "/maestrotype", "database/sql", "workflows depends on database/sql (workflows -> maestrotype -> database/sql)"},
		{"WorkflowReachesPgx", m + "/maestrotype", "github.com/jackc/pgx/v5/pgxpool", "workflows depends on github.com/jackc/pgx/v5/pgxpool"},
		{"WorkflowReachesSQLiteThroughSDK", "go.temporal.io/sdk/workflow", "modernc.org/sqlite", "workflows depends on modernc.org/sqlite (workflows -> go.temporal.io/sdk/workflow -> modernc.org/sqlite)"},
		{"WorkflowReachesOurPackage", m + "/maestrotype", m + "/tools", "workflows depends on tools (workflows -> maestrotype -> tools)"},
		{"StarterImportsLedger", m + "/cmd/starter", m + "/internal/ledger", "cmd/starter depends on internal/ledger (cmd/starter -> internal/ledger): the CLI may link of this module only apiclient, apitype, maestrotype, eval, tools, approval/rule, receipts"},
		{"StarterReachesConnectors", m + "/apitype", m + "/internal/connectors", "cmd/starter depends on internal/connectors (cmd/starter -> apiclient -> apitype -> internal/connectors)"},
		{"ActivitiesImportStandin", m + "/activities", m + "/internal/standin/twilio", "activities imports internal/standin/twilio: only the dev-mode wiring and the test harnesses may import the stand-ins"},
		{"WorkerImportsStandin", m + "/cmd/worker", m + "/internal/standin", "cmd/worker imports internal/standin:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := clean()
			g[tc.from] = append(g[tc.from], tc.to)
			got := Violations(g, m)
			require.NotEmpty(t, got)
			require.Contains(t, strings.Join(got, "\n"), tc.want)
		})
	}
}

// goList runs the go command at the module root and returns its stdout.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go %s: %s", strings.Join(args, " "), stderr.String())
	return strings.TrimSpace(string(out))
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}
