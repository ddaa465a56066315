package workflows

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/maestro-run/maestro/internal/codec"
)

// TestReplayRecordedHistories replays histories recorded from real runs
// (see service's TestRecordedHistoriesReplay) with maestro's codec, as its
// worker reads them: those under testdata/encrypted were written
// encrypted under the test fixture key, the others before encryption. A
// change to the workflow that would break running executions fails here.
func TestReplayRecordedHistories(t *testing.T) {
	t.Parallel()
	c, err := codec.Load(codec.Config{KeyDir: filepath.Join("testdata", "codec")})
	require.NoError(t, err)
	plain, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, plain, "no recorded histories in testdata")
	encrypted, err := encryptedHistories()
	require.NoError(t, err)
	require.NotEmpty(t, encrypted, "no encrypted histories in testdata/encrypted")
	for _, f := range append(plain, encrypted...) {
		name, _ := filepath.Rel("testdata", f)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, err := NewReplayer(c.DataConverter(), c.FailureConverter())
			require.NoError(t, err)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}

// encryptedHistories lists the encrypted histories: the first set, and
// one directory per later set recorded as workflow code changed.
func encryptedHistories() ([]string, error) {
	first, err := filepath.Glob(filepath.Join("testdata", "encrypted", "*.json"))
	if err != nil {
		return nil, err
	}
	later, err := filepath.Glob(filepath.Join("testdata", "encrypted", "*", "*.json"))
	return append(first, later...), err
}

// TestEncryptedHistoriesAreEncrypted shows the encrypted histories replayed
// above are what they claim: every payload encrypted under the fixture key.
func TestEncryptedHistoriesAreEncrypted(t *testing.T) {
	t.Parallel()
	files, err := encryptedHistories()
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		r, err := os.Open(f)
		require.NoError(t, err)
		hist, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
		require.NoError(t, r.Close())
		require.NoError(t, err, f)
		seen := 0
		require.NoError(t, proxy.VisitPayloads(t.Context(), hist, proxy.VisitPayloadsOptions{
			Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
				for _, p := range ps {
					seen++
					require.Equal(t, codec.Encoding, string(p.GetMetadata()[converter.MetadataEncoding]), f)
					require.Equal(t, "test-fixture", string(p.GetMetadata()[codec.MetadataKeyID]), f)
				}
				return ps, nil
			},
			// Temporal's own search attributes are not payloads a codec
			// sees; maestro sets none of its own.
			SkipSearchAttributes: true,
		}))
		require.NotZero(t, seen, f)
	}
}
