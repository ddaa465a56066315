package sandbox_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

func TestInjectedFailureIsStripeShaped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.standin.Faults().FailNext(1, http.StatusInternalServerError)
	f.standin.Faults().FailNext(1, http.StatusTooManyRequests)

	res := f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody)
	require.Equal(t, http.StatusInternalServerError, res.status)
	require.Equal(t, "fail", res.header.Get(fault.Header))
	require.JSONEq(t, `{"error":{"type":"api_error","message":"Internal Server Error"}}`, string(res.raw))

	res = f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody)
	require.Equal(t, http.StatusTooManyRequests, res.status)
	require.Equal(t, "invalid_request_error", res.apiError(t).Type)
	require.Zero(t, f.standin.CountWorkOrders())
}

func TestFailAfterEffectHidesTheSuccess(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.call(t, http.MethodPost, fault.AdminPath, `{"action":"fail","status":502,"phase":"after_effect","path":"/v1/refunds"}`, anonymous())
	require.Equal(t, http.StatusCreated, res.status)

	body := `{"tenant_id":"t_100","amount_cents":100,"currency":"usd","reason":"r"}`
	res = f.call(t, http.MethodPost, "/v1/refunds", body, withKey("key-1"))
	require.Equal(t, http.StatusBadGateway, res.status)
	require.Equal(t, 1, f.standin.CountRefunds(), "the effect happened anyway")

	// A reader that checks before retrying finds it by its external state.
	res = f.call(t, http.MethodGet, "/v1/refunds?tenant_id=t_100", "")
	require.Len(t, res.ids(t), 1)
	// And a retry with the key gets the saved success.
	res = f.call(t, http.MethodPost, "/v1/refunds", body, withKey("key-1"))
	require.Equal(t, http.StatusCreated, res.status)
	require.Equal(t, "true", res.header.Get("Idempotent-Replayed"))
	require.Equal(t, 1, f.standin.CountRefunds())
}
