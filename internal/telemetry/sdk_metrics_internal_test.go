package telemetry

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

// Past the limit a handler still hands out working instruments and
// tagged copies, and remembers no more of them.
func TestSDKMetricsRememberNoMoreThanTheLimit(t *testing.T) {
	t.Parallel()
	m := newSDKMetrics(client.MetricsNopHandler, func(error) {})
	for i := range sdkMetricsLimit + 10 {
		m.Counter("c" + strconv.Itoa(i)).Inc(1)
		m.WithTags(map[string]string{"operation": strconv.Itoa(i)}).Timer("t").Record(0)
	}
	require.Equal(t, int64(sdkMetricsLimit), m.held.Load())
}

// A set of tags has one key whatever order its map yields it in, and
// different sets have different keys.
func TestTagsKeyIgnoresOrder(t *testing.T) {
	t.Parallel()
	a := map[string]string{"namespace": "default", "task_queue": "maestro", "operation": "Poll"}
	b := map[string]string{"operation": "Poll", "task_queue": "maestro", "namespace": "default"}
	require.Equal(t, tagsKey(a), tagsKey(b))
	require.NotEqual(t, tagsKey(a), tagsKey(map[string]string{"namespace": "default", "task_queue": "maestro"}))
	require.NotEqual(t, tagsKey(map[string]string{"a": "b"}), tagsKey(map[string]string{"a": "c"}))
	require.Empty(t, tagsKey(nil))
}
