package workflows

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReplayRecordedHistories replays histories recorded from real runs
// (see service's TestRecordedHistoriesReplay). A change to the workflow
// that would break running executions fails here.
func TestReplayRecordedHistories(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no recorded histories in testdata")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			require.NoError(t, NewReplayer().ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}
