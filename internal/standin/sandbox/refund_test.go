package sandbox_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRefundLifecycle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	res := f.call(t, http.MethodPost, "/v1/refunds",
		`{"tenant_id":"t_102","amount_cents":5000,"currency":"USD","reason":"Overpaid May rent","external_ref":"ledger-9"}`)
	require.Equal(t, http.StatusCreated, res.status)
	id := res.object(t)["id"].(string)
	require.Regexp(t, `^re_[A-Z2-7]{26}$`, id)
	require.JSONEq(t, fmt.Sprintf(`{
		"id": %q, "object": "refund", "status": "succeeded", "created": %d,
		"cancel_count": 0, "cancelled_at": null,
		"tenant_id": "t_102", "amount_cents": 5000, "currency": "usd",
		"reason": "Overpaid May rent", "external_ref": "ledger-9"
	}`, id, start), string(res.raw))

	got := f.call(t, http.MethodGet, "/v1/refunds/"+id, "")
	require.JSONEq(t, string(res.raw), string(got.raw))

	listed := f.call(t, http.MethodGet, "/v1/refunds?tenant_id=t_102&external_ref=ledger-9", "")
	require.Equal(t, []string{id}, listed.ids(t))
	require.Empty(t, f.call(t, http.MethodGet, "/v1/refunds?tenant_id=t_100", "").ids(t))

	reversed := f.call(t, http.MethodPost, "/v1/refunds/"+id+"/cancel", "")
	require.Equal(t, http.StatusOK, reversed.status)
	require.Equal(t, "cancelled", reversed.object(t)["status"])

	r, ok := f.standin.Refund(id)
	require.True(t, ok)
	require.Equal(t, "cancelled", r.Status)
	require.Equal(t, 1, r.CancelCount)
	require.Equal(t, 1, f.standin.CountRefunds())
	require.Len(t, f.standin.Refunds(), 1)

	res = f.call(t, http.MethodGet, "/v1/refunds/re_nope", "")
	require.Equal(t, http.StatusNotFound, res.status)
	require.Equal(t, "No such refund: 're_nope'", res.apiError(t).Message)
}

func TestRefundValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const valid = `"tenant_id":"t_100","currency":"usd","reason":"r"`
	cases := []struct {
		body, param, message string
	}{
		{`{` + valid + `}`, "amount_cents", "Missing required param: amount_cents."},
		{`{` + valid + `,"amount_cents":0}`, "amount_cents", "must be a positive integer"},
		{`{` + valid + `,"amount_cents":-100}`, "amount_cents", "must be a positive integer"},
		{`{` + valid + `,"amount_cents":10.5}`, "amount_cents", "Invalid amount_cents"},
		{`{` + valid + `,"amount_cents":"100"}`, "amount_cents", "Invalid amount_cents"},
		{`{"tenant_id":"t_100","reason":"r","amount_cents":100,"currency":"dollars"}`, "currency", "three-letter ISO code"},
		{`{"tenant_id":"t_100","currency":"usd","amount_cents":100}`, "reason", "Missing required param: reason."},
		{`{"currency":"usd","reason":"r","amount_cents":100}`, "tenant_id", "Missing required param: tenant_id."},
		{`{"tenant_id":"t_404","currency":"usd","reason":"r","amount_cents":100}`, "tenant_id", "No such tenant"},
		{`{` + valid + `,"amount_cents":100,"amount":100}`, "amount", "Received unknown parameter: amount"},
	}
	for _, tc := range cases {
		res := f.call(t, http.MethodPost, "/v1/refunds", tc.body)
		require.Equal(t, http.StatusBadRequest, res.status, tc.body)
		e := res.apiError(t)
		require.Equal(t, tc.param, e.Param, tc.body)
		require.Contains(t, e.Message, tc.message, tc.body)
	}
	require.Zero(t, f.standin.CountRefunds())
}

func TestRefundCurrencyDefaultsToUSD(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.call(t, http.MethodPost, "/v1/refunds", `{"tenant_id":"t_100","amount_cents":100,"reason":"r"}`)
	require.Equal(t, http.StatusCreated, res.status)
	require.Equal(t, "usd", res.object(t)["currency"])
}
