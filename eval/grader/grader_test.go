package grader_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/eval/grader"
	"github.com/maestro-run/maestro/store/storetest"
)

// Every error path of every connector, three times each, through the real
// admission, workflow, activity, ledger and connectors: all must pass.
func TestRecoveryPathsPassCubed(t *testing.T) {
	t.Parallel()
	rep, err := grader.Run(t.Context(), grader.Config{Store: storetest.Postgres(t)})
	require.NoError(t, err)

	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	t.Log("\n" + table.String())
	require.Len(t, rep.Paths, len(grader.Targets)*len(grader.Paths))
	for _, p := range rep.Paths {
		require.Len(t, p.Results, 3)
	}
	require.Equal(t, 1.0, rep.PassRate(), "pass^3 must be 1.0")
}
