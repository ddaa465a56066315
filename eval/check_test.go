package eval

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckCatalog runs the start's checks over small catalogs, each
// breaking one rule, and a good one that passes.
func TestCheckCatalog(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]struct {
		rule  Rule
		stage string
		field string
	}{
		"no_class.yaml":            {rule: "unclassified", stage: StageLoad, field: "effect"},
		"deferred_past_tense.yaml": {rule: "deferred-past-tense", stage: StageLoad, field: "wording.success"},
		"realsync_no_receipt.yaml": {rule: "receipt", stage: StageLoad, field: "receipt.fields"},
		"template_absent.yaml":     {rule: "template-field-may-be-absent", stage: StageLoad, field: "wording.success"},
		"demo_keys.yaml":           {rule: RuleDemoKeys, stage: StageKeys},
		"canary_misplaced.yaml":    {rule: "canary", stage: StageLoad, field: "canary"},
		"canary_bad_args.yaml":     {rule: "canary", stage: StageLoad, field: "canary.args"},
	} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", "check", file))
			require.NoError(t, err)
			_, findings := CheckCatalog(data, CheckOptions{})
			require.NotEmpty(t, findings)
			var found bool
			for _, f := range findings {
				require.NotEmpty(t, f.Rule, "every finding names its rule: %v", f)
				require.NotEmpty(t, f.Detail)
				if f.Rule == want.rule && f.Stage == want.stage && f.Field == want.field {
					found = true
				}
			}
			require.True(t, found, "want %s at %s, got %v", want.rule, want.field, findings)
		})
	}

	t.Run("good", func(t *testing.T) {
		t.Parallel()
		data, err := os.ReadFile(filepath.Join("testdata", "check", "good.yaml"))
		require.NoError(t, err)
		c, findings := CheckCatalog(data, CheckOptions{})
		require.Empty(t, findings)
		require.Len(t, c.Tools(), 2)
	})

	t.Run("every violation at once", func(t *testing.T) {
		t.Parallel()
		data, err := os.ReadFile(filepath.Join("testdata", "check", "canary_misplaced.yaml"))
		require.NoError(t, err)
		_, findings := CheckCatalog(data, CheckOptions{})
		require.Len(t, findings, 2, "the loader reports both rows, not the first only: %v", findings)
		require.Equal(t, Rule("requires-green-canary"), findings[1].Rule)
	})

	t.Run("demo keys in dev mode", func(t *testing.T) {
		t.Parallel()
		data, err := os.ReadFile(filepath.Join("testdata", "check", "demo_keys.yaml"))
		require.NoError(t, err)
		_, findings := CheckCatalog(data, CheckOptions{Dev: true})
		require.Empty(t, findings)
	})

	t.Run("not YAML", func(t *testing.T) {
		t.Parallel()
		_, findings := CheckCatalog([]byte("version: [1\n"), CheckOptions{})
		require.Len(t, findings, 1)
		require.Equal(t, RuleParse, findings[0].Rule)
	})
}
