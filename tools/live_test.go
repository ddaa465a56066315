package tools_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

func TestLiveServesEachVersionItHeldAndLoadsOthersFromTheirFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v1, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	v2src := append(append([]byte(nil), tools.DemoCatalogYAML...), "\n# two\n"...)
	v3src := append(append([]byte(nil), tools.DemoCatalogYAML...), "\n# three\n"...)
	v2, err := tools.Load(v2src)
	require.NoError(t, err)
	require.Equal(t, tools.Hash(v2src), v2.Hash())
	require.Equal(t, v2src, v2.Source())

	recorded := map[string][]byte{tools.Hash(v3src): v3src, "forged": v2src}
	live := tools.NewLive(v1, func(_ context.Context, version string) ([]byte, error) {
		if src, ok := recorded[version]; ok {
			return src, nil
		}
		return nil, errors.New("not recorded")
	})
	require.Same(t, v1, live.Swap(v2), "Swap returns the catalog it replaced")
	require.Same(t, v2, live.Load())

	got, err := live.At(ctx, v1.Hash())
	require.NoError(t, err)
	require.Same(t, v1, got, "a version held before stays served")
	got, err = live.At(ctx, "")
	require.NoError(t, err)
	require.Same(t, v2, got, "no version means the current one")
	got, err = live.At(ctx, tools.Hash(v3src))
	require.NoError(t, err)
	require.Equal(t, tools.Hash(v3src), got.Hash(), "a version never held loads from its recorded file")

	_, err = live.At(ctx, "forged")
	require.ErrorContains(t, err, "the recorded file hashes to "+v2.Hash())
	require.ErrorIs(t, err, tools.ErrVersionUnknown, "a file that loads as another version never will")
	_, err = live.At(ctx, "missing")
	require.ErrorContains(t, err, "not recorded")
	require.NotErrorIs(t, err, tools.ErrVersionUnknown, "a source that did not answer may on a retry")

	_, err = tools.NewLive(v1, nil).At(ctx, v2.Hash())
	require.ErrorIs(t, err, tools.ErrVersionUnknown)
	_, err = v1.At(ctx, v2.Hash())
	require.ErrorIs(t, err, tools.ErrVersionUnknown, "a plain catalog serves its own version only")
	got, err = v1.At(ctx, v1.Hash())
	require.NoError(t, err)
	require.Same(t, v1, got)
}
