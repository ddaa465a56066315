package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// run executes the command in-process and returns stdout, stderr and the
// exit status main would use.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	code := 0
	var ex *exitError
	switch {
	case errors.As(err, &ex):
		code = ex.code
	case err != nil:
		errOut.WriteString(err.Error())
		code = 1
	}
	return out.String(), errOut.String(), code
}

func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--help"}, {"reality", "--help"}, {"recovery", "--help"}, {"standins", "--help"},
		{"catalog", "--help"}, {"catalog", "check", "--help"},
	} {
		out, _, code := run(t, args...)
		require.Equal(t, 0, code, args)
		require.Contains(t, out, "Usage:", args)
	}
}

func TestCatalogCheck(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "catalog", "check", "../../tools/demo_catalog.yaml")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "0 fence violation(s)")

	out, errOut, code = run(t, "catalog", "check", "../../tools/demo_catalog.yaml", "--json")
	require.Equal(t, 0, code, errOut)
	var report struct {
		Tools      int   `json:"tools"`
		Violations []any `json:"violations"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	require.NotZero(t, report.Tools)
	require.NotNil(t, report.Violations, "no violations is an empty list, not null")

	demo, err := os.ReadFile("../../tools/demo_catalog.yaml")
	require.NoError(t, err)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(string(demo), "version: 1", "version: 2", 1)), 0o600))
	_, errOut, code = run(t, "catalog", "check", bad)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "catalog: version: must be 1, got 2")
}
