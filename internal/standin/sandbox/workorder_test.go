package sandbox_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin/sandbox"
)

func TestCreateAndGetWorkOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	res := f.call(t, http.MethodPost, "/v1/work_orders",
		`{"tenant_id":"t_100","unit":"4B","description":"Kitchen sink leaking","category":"plumbing","priority":"urgent","external_ref":"ledger-7"}`)
	require.Equal(t, http.StatusCreated, res.status)
	created := res.object(t)
	id := created["id"].(string)
	require.Regexp(t, `^wo_[A-Z2-7]{26}$`, id)
	require.JSONEq(t, fmt.Sprintf(`{
		"id": %q, "object": "work_order", "status": "open", "created": %d,
		"cancel_count": 0, "cancelled_at": null,
		"tenant_id": "t_100", "unit": "4B", "description": "Kitchen sink leaking",
		"category": "plumbing", "priority": "urgent", "external_ref": "ledger-7"
	}`, id, start), string(res.raw))

	got := f.call(t, http.MethodGet, "/v1/work_orders/"+id, "")
	require.Equal(t, http.StatusOK, got.status)
	require.JSONEq(t, string(res.raw), string(got.raw))

	wo, ok := f.standin.WorkOrder(id)
	require.True(t, ok)
	require.Equal(t, "Kitchen sink leaking", wo.Description)
	require.Equal(t, 1, f.standin.CountWorkOrders())

	noRef := f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody)
	require.Equal(t, "null", noRef.field(t, "external_ref"))
}

func TestGetUnknownWorkOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.call(t, http.MethodGet, "/v1/work_orders/wo_nope", "")
	require.Equal(t, http.StatusNotFound, res.status)
	require.JSONEq(t, `{"error":{"type":"invalid_request_error","message":"No such work_order: 'wo_nope'","param":"id"}}`, string(res.raw))
}

func TestWorkOrderValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		body, param, message string
	}{
		{`{"unit":"4B","description":"x","category":"plumbing","priority":"routine"}`, "tenant_id", "Missing required param: tenant_id."},
		{`{"tenant_id":"t_999","unit":"4B","description":"x","category":"plumbing","priority":"routine"}`, "tenant_id", "No such tenant: 't_999'"},
		{`{"tenant_id":"t_100","unit":"4B","description":"x","priority":"routine"}`, "category", "Missing required param: category."},
		{`{"tenant_id":"t_100","unit":"4B","category":"plumbing","priority":"routine"}`, "description", "Missing required param: description."},
		{`{"tenant_id":"t_100","unit":"4B","description":"` + strings.Repeat("x", 2001) + `","category":"plumbing","priority":"routine"}`, "description", "at most 2000"},
		{`{"tenant_id":"t_100","unit":"4B","description":"x","category":"plumbing"}`, "priority", "Missing required param: priority."},
		{`{"tenant_id":"t_100","unit":"4B","description":"x","category":"plumbing","priority":"high"}`, "priority", "must be one of routine, urgent, emergency"},
		{`{"tenant_id":"t_100","unit":"4B","description":"x","category":"plumbing","priority":"routine","external_ref":""}`, "external_ref", "Missing required param"},
		{`{"tenant_id":"t_100","unit":"4B","description":"x","category":"plumbing","priority":"routine","colour":"red"}`, "colour", "Received unknown parameter: colour"},
		{`{"tenant_id":42,"unit":"4B","description":"x","category":"plumbing","priority":"routine"}`, "tenant_id", "Invalid tenant_id"},
		{`not json`, "", "Invalid JSON body"},
		{``, "", "Invalid JSON body"},
	}
	for _, tc := range cases {
		res := f.call(t, http.MethodPost, "/v1/work_orders", tc.body)
		require.Equal(t, http.StatusBadRequest, res.status, tc.body)
		e := res.apiError(t)
		require.Equal(t, "invalid_request_error", e.Type, tc.body)
		require.Equal(t, tc.param, e.Param, tc.body)
		require.Contains(t, e.Message, tc.message, tc.body)
	}
	require.Zero(t, f.standin.CountWorkOrders())
}

func TestListWorkOrders(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.createWorkOrder(t, `{"tenant_id":"t_100","unit":"4B","description":"a","category":"plumbing","priority":"routine","external_ref":"ref-a"}`)
	f.clock.Advance(time.Second)
	b := f.createWorkOrder(t, `{"tenant_id":"t_101","unit":"12A","description":"b","category":"plumbing","priority":"routine","external_ref":"ref-b"}`)
	f.clock.Advance(time.Second)
	c := f.createWorkOrder(t, `{"tenant_id":"t_100","unit":"4B","description":"c","category":"plumbing","priority":"urgent"}`)
	require.Equal(t, http.StatusOK, f.call(t, http.MethodPost, "/v1/work_orders/"+c+"/cancel", "").status)

	cases := map[string][]string{
		"":                             {c, b, a},
		"?tenant_id=t_100":             {c, a},
		"?external_ref=ref-b":          {b},
		"?status=open":                 {b, a},
		"?status=cancelled":            {c},
		"?tenant_id=t_100&status=open": {a},
		"?tenant_id=t_102":             nil,
		"?limit=2":                     {c, b},
		"?limit=2&starting_after=" + b: {a},
		"?starting_after=" + a:         nil,
	}
	for query, want := range cases {
		res := f.call(t, http.MethodGet, "/v1/work_orders"+query, "")
		require.Equal(t, http.StatusOK, res.status, query)
		require.Equal(t, want, res.ids(t), query)
	}

	res := f.call(t, http.MethodGet, "/v1/work_orders?limit=2", "")
	require.Equal(t, "true", res.field(t, "has_more"))
	res = f.call(t, http.MethodGet, "/v1/work_orders?limit=3", "")
	require.Equal(t, "false", res.field(t, "has_more"))

	for query, param := range map[string]string{
		"?limit=0":              "limit",
		"?limit=101":            "limit",
		"?limit=ten":            "limit",
		"?starting_after=wo_no": "starting_after",
		"?priority=low":         "priority",
	} {
		res := f.call(t, http.MethodGet, "/v1/work_orders"+query, "")
		require.Equal(t, http.StatusBadRequest, res.status, query)
		require.Equal(t, param, res.apiError(t).Param, query)
	}
}

func TestCancelWorkOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.createWorkOrder(t, workOrderBody)

	f.clock.Advance(time.Minute)
	res := f.call(t, http.MethodPost, "/v1/work_orders/"+id+"/cancel", "")
	require.Equal(t, http.StatusOK, res.status)
	first := res.object(t)
	require.Equal(t, "cancelled", first["status"])
	require.EqualValues(t, start+60, first["cancelled_at"])
	require.EqualValues(t, 1, first["cancel_count"])

	f.clock.Advance(time.Minute)
	res = f.call(t, http.MethodPost, "/v1/work_orders/"+id+"/cancel", "{}")
	require.Equal(t, http.StatusOK, res.status, "cancelling twice is a no-op")
	second := res.object(t)
	require.Equal(t, "cancelled", second["status"])
	require.EqualValues(t, start+60, second["cancelled_at"], "the first cancellation stands")
	require.EqualValues(t, 2, second["cancel_count"], "but the repeat is on record")

	wo, _ := f.standin.WorkOrder(id)
	require.Equal(t, 2, wo.CancelCount)

	res = f.call(t, http.MethodPost, "/v1/work_orders/wo_nope/cancel", "")
	require.Equal(t, http.StatusNotFound, res.status)
	res = f.call(t, http.MethodPost, "/v1/work_orders/"+id+"/cancel", `{"reason":"x"}`)
	require.Equal(t, http.StatusBadRequest, res.status)
	require.Equal(t, "reason", res.apiError(t).Param)
}

func TestAccessorsReturnCopies(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.createWorkOrder(t, workOrderBody)

	orders := f.standin.WorkOrders()
	orders[0].Status = "tampered"
	wo, _ := f.standin.WorkOrder(id)
	require.Equal(t, "open", wo.Status)
	require.True(t, slices.ContainsFunc(f.standin.WorkOrders(), func(w sandbox.WorkOrder) bool { return w.ID == id }))
}
