package ses_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStoreSince(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()

	first := f.clock.Now().Unix()
	_, err := c.SendEmail(t.Context(), simpleInput())
	require.NoError(t, err)
	f.clock.Advance(time.Minute)
	second := f.clock.Now().Unix()
	_, err = c.SendEmail(t.Context(), simpleInput())
	require.NoError(t, err)

	require.Len(t, f.readStore(t, "?since="+strconv.FormatInt(first, 10)), 2)
	later := f.readStore(t, "?since="+strconv.FormatInt(second, 10))
	require.Len(t, later, 1)
	require.EqualValues(t, second, later[0]["at"], "since is inclusive")
	require.Empty(t, f.readStore(t, "?since="+strconv.FormatInt(second+1, 10)))
}

func TestStoreRejectsBadSince(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, since := range []string{"yesterday", "1.5", "017"} {
		status, body := f.get(t, "/store?since="+since)
		require.Equal(t, http.StatusBadRequest, status, since)
		require.Contains(t, string(body), "Bad since query param", since)
	}
}

func TestClearStore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.client().SendEmail(t.Context(), simpleInput())
	require.NoError(t, err)
	require.Len(t, f.readStore(t, ""), 1)

	resp, err := f.srv.Client().Post(f.srv.URL+"/clear-store", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, f.readStore(t, ""))
	require.Zero(t, f.standin.CountEmails())
}
