package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func checkFile(name string) string {
	return filepath.Join("..", "..", "eval", "testdata", "check", name)
}

// TestCatalogCheck runs catalog check on files, with no server anywhere.
func TestCatalogCheck(t *testing.T) {
	t.Parallel()
	t.Run("good", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := run(t, "--server", "http://127.0.0.1:1", "catalog", "check", checkFile("good.yaml"))
		require.Equal(t, 0, code, errOut)
		require.Empty(t, out)
		require.Contains(t, errOut, "no violations")
	})
	t.Run("one line per violation, led by its rule", func(t *testing.T) {
		t.Parallel()
		out, _, code := run(t, "catalog", "check", checkFile("canary_misplaced.yaml"))
		require.Equal(t, 3, code)
		require.Equal(t, "canary: tools[0] \"lookup_customer\": canary: only real-sync tools have an effect the provider can confirm; this one is readonly\n"+
			"requires-green-canary: tools[1] \"send_sms\": requires_green_canary: the tool has no canary to be green: add canary: {args: {...}}\n", out)
	})
	t.Run("json", func(t *testing.T) {
		t.Parallel()
		out, _, code := run(t, "catalog", "check", "--json", checkFile("template_absent.yaml"))
		require.Equal(t, 3, code)
		var res catalogCheck
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		require.False(t, res.OK)
		require.Len(t, res.Violations, 1)
		v := res.Violations[0]
		require.Equal(t, "load", v.Stage)
		require.EqualValues(t, "template-field-may-be-absent", v.Rule)
		require.Equal(t, `tools[1] "send_sms"`, v.Row)
		require.Equal(t, "wording.success", v.Field)

		out, _, code = run(t, "catalog", "check", "--json", checkFile("good.yaml"))
		require.Equal(t, 0, code)
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		require.True(t, res.OK)
		require.Equal(t, 2, res.Tools)
		require.NotNil(t, res.Violations)
		require.Empty(t, res.Violations)
	})
	t.Run("missing file", func(t *testing.T) {
		t.Parallel()
		_, errOut, code := run(t, "catalog", "check", filepath.Join(t.TempDir(), "absent.yaml"))
		require.Equal(t, 1, code)
		require.Contains(t, errOut, "error reading the catalog")
	})
	t.Run("no file", func(t *testing.T) {
		t.Parallel()
		_, _, code := run(t, "catalog", "check")
		require.Equal(t, 1, code)
	})
}
