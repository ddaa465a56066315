package sandbox_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := map[string]struct {
		opts    []option
		message string
	}{
		"no header":   {[]option{anonymous()}, "You did not provide an API key."},
		"wrong token": {[]option{withToken("sk_test_wrong")}, "Invalid API Key provided."},
		"empty token": {[]option{withToken("")}, "Invalid API Key provided."},
	}
	for name, tc := range cases {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			res := f.call(t, method, "/v1/work_orders", workOrderBody, tc.opts...)
			require.Equal(t, http.StatusUnauthorized, res.status, name)
			require.Equal(t, `Bearer realm="sandbox"`, res.header.Get("WWW-Authenticate"))
			e := res.apiError(t)
			require.Equal(t, "invalid_request_error", e.Type, name)
			require.Contains(t, e.Message, tc.message, name)
		}
	}
	require.Zero(t, f.standin.CountWorkOrders())

	res := f.call(t, http.MethodGet, "/v1/tenants/t_100", "")
	require.Equal(t, http.StatusOK, res.status, "the right token works")
}

func TestAdminPathsNeedNoToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.call(t, http.MethodGet, fault.AdminPath, "", anonymous())
	require.Equal(t, http.StatusOK, res.status)
}

func TestUnknownRoute(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.call(t, http.MethodPut, "/v1/tenants/t_100", "{}")
	require.Equal(t, http.StatusNotFound, res.status)
	require.JSONEq(t, `{"error":{"type":"invalid_request_error","message":"Unrecognized request URL (PUT: /v1/tenants/t_100)."}}`, string(res.raw))
}
