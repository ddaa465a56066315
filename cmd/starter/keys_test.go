package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

// runWithStdin runs the CLI with stdin.
func runWithStdin(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCmd()
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		return out.String(), err.Error(), 1
	}
	return out.String(), errOut.String(), 0
}

// TestKeysHashIsWhatTheCatalogStores: the hash printed for a key is the
// api_key_sha256 the catalog authenticates it by, with or without the
// trailing newline an echo adds.
func TestKeysHashIsWhatTheCatalogStores(t *testing.T) {
	t.Parallel()
	for _, stdin := range []string{tools.DemoAgentKey, tools.DemoAgentKey + "\n", tools.DemoAgentKey + "\r\n"} {
		out, errOut, code := runWithStdin(t, stdin, "keys", "hash")
		require.Equal(t, 0, code, errOut)
		require.Equal(t, tools.HashKey(tools.DemoAgentKey)+"\n", out)
		require.Contains(t, string(tools.DemoCatalogYAML), "api_key_sha256: "+strings.TrimSpace(out))
	}
}

// TestKeysHashRefusesWhatNoClientSends: an empty stdin, two lines or a key
// with spaces around it would hash to a value no client ever presents.
func TestKeysHashRefusesWhatNoClientSends(t *testing.T) {
	t.Parallel()
	for stdin, want := range map[string]string{
		"":              "no key on stdin",
		"\n":            "no key on stdin",
		"one\ntwo\n":    "stdin holds more than one line",
		" padded-key\n": "starts or ends with spaces",
	} {
		out, errOut, code := runWithStdin(t, stdin, "keys", "hash")
		require.Equal(t, 1, code, "stdin %q", stdin)
		require.Contains(t, errOut, want, "stdin %q", stdin)
		require.Empty(t, out)
	}
}

// TestKeysNewPrintsAFreshKeyAndItsHash: each key is new, and its hash is
// the one the catalog would store.
func TestKeysNewPrintsAFreshKeyAndItsHash(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 2 {
		out, errOut, code := runWithStdin(t, "", "--json", "keys", "new", "--prefix", "ops_")
		require.Equal(t, 0, code, errOut)
		var k keyHashJSON
		require.NoError(t, json.Unmarshal([]byte(out), &k))
		require.True(t, strings.HasPrefix(k.Key, "ops_"), k.Key)
		require.Equal(t, tools.HashKey(k.Key), k.SHA256)
		require.False(t, seen[k.Key], "keys repeat")
		seen[k.Key] = true
	}
}
