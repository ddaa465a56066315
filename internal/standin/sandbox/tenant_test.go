package sandbox_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin/sandbox"
)

func TestGetTenant(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	res := f.call(t, http.MethodGet, "/v1/tenants/t_101", "")
	require.Equal(t, http.StatusOK, res.status)
	require.JSONEq(t, `{
		"id": "t_101", "object": "tenant", "name": "James Chen", "unit": "12A",
		"phone": "+14155550101", "email": "james.chen@example.com",
		"balance_cents": 125000, "status": "past_due", "deleted": false
	}`, string(res.raw))

	res = f.call(t, http.MethodGet, "/v1/tenants/t_999", "")
	require.Equal(t, http.StatusNotFound, res.status)
	require.JSONEq(t, `{"error":{"type":"invalid_request_error","message":"No such tenant: 't_999'","param":"id"}}`, string(res.raw))
}

func TestListTenants(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	res := f.call(t, http.MethodGet, "/v1/tenants", "")
	require.Equal(t, http.StatusOK, res.status)
	require.Equal(t, []string{"t_100", "t_101", "t_102", "t_103"}, res.ids(t))
	page := res.object(t)
	require.Equal(t, "list", page["object"])
	require.Equal(t, false, page["has_more"])
	require.Equal(t, "/v1/tenants", page["url"])

	res = f.call(t, http.MethodGet, "/v1/tenants?phone=%2B14155550102", "")
	require.Equal(t, []string{"t_102"}, res.ids(t))

	res = f.call(t, http.MethodGet, "/v1/tenants?status=active", "")
	require.Equal(t, []string{"t_100", "t_102"}, res.ids(t))

	res = f.call(t, http.MethodGet, "/v1/tenants?phone=%2B19999999999", "")
	require.Equal(t, http.StatusOK, res.status)
	require.Empty(t, res.ids(t))
	require.JSONEq(t, `[]`, res.field(t, "data"), "an empty list, not null")

	res = f.call(t, http.MethodGet, "/v1/tenants?unit=4B", "")
	require.Equal(t, http.StatusBadRequest, res.status)
	require.Equal(t, "unit", res.apiError(t).Param)
}

func TestDeleteTenantIsIrreversible(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	res := f.call(t, http.MethodDelete, "/v1/tenants/t_103", "")
	require.Equal(t, http.StatusOK, res.status)
	obj := res.object(t)
	require.Equal(t, "t_103", obj["id"])
	require.Equal(t, true, obj["deleted"])
	require.Equal(t, "Tom Becker", obj["name"], "the deleted object comes back whole")

	res = f.call(t, http.MethodGet, "/v1/tenants/t_103", "")
	require.Equal(t, http.StatusOK, res.status)
	require.Equal(t, true, res.object(t)["deleted"])

	res = f.call(t, http.MethodGet, "/v1/tenants", "")
	require.NotContains(t, res.ids(t), "t_103")

	res = f.call(t, http.MethodDelete, "/v1/tenants/t_103", "")
	require.Equal(t, http.StatusNotFound, res.status, "already gone")

	res = f.call(t, http.MethodPost, "/v1/work_orders", `{"tenant_id":"t_103","unit":"2D","description":"x","category":"plumbing","priority":"routine"}`)
	require.Equal(t, http.StatusBadRequest, res.status)
	e := res.apiError(t)
	require.Equal(t, "tenant_id", e.Param)
	require.Equal(t, "Tenant 't_103' has been deleted.", e.Message)

	tn, ok := f.standin.Tenant("t_103")
	require.True(t, ok)
	require.True(t, tn.Deleted)
}

func TestSeedTenants(t *testing.T) {
	t.Parallel()
	custom := []sandbox.Tenant{{ID: "t_1", Name: "Solo", Phone: "+441632960000"}}
	s, err := sandbox.New(sandbox.Options{Tenants: custom})
	require.NoError(t, err)
	require.Len(t, s.Tenants(), 1)
	require.Equal(t, "tenant", s.Tenants()[0].Object)

	s, err = sandbox.New(sandbox.Options{Tenants: []sandbox.Tenant{}})
	require.NoError(t, err)
	require.Empty(t, s.Tenants())

	for name, seed := range map[string][]sandbox.Tenant{
		"missing id":   {{Phone: "+14155550100"}},
		"duplicate id": {{ID: "t_1", Phone: "+14155550100"}, {ID: "t_1", Phone: "+14155550101"}},
		"bad phone":    {{ID: "t_1", Phone: "415-555-0100"}},
	} {
		_, err := sandbox.New(sandbox.Options{Tenants: seed})
		require.Error(t, err, name)
	}
}
