package sandbox_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

const idempotencyConflict = `{"error":{"type":"idempotency_error","message":"Keys for idempotent requests can only be used with the same parameters they were first used with."}}`

func TestIdempotentReplayIsByteForByte(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	first := f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody, withKey("key-1"))
	require.Equal(t, http.StatusCreated, first.status)
	require.Empty(t, first.header.Get("Idempotent-Replayed"))

	// Same parameters in another order and spacing are the same request.
	reordered := `{ "category": "plumbing", "priority": "urgent", "description": "Kitchen sink leaking", "unit": "4B", "tenant_id": "t_100" }`
	for _, body := range []string{workOrderBody, reordered} {
		again := f.call(t, http.MethodPost, "/v1/work_orders", body, withKey("key-1"))
		require.Equal(t, http.StatusCreated, again.status)
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.Equal(t, first.header.Get("Content-Type"), again.header.Get("Content-Type"))
		require.Equal(t, string(first.raw), string(again.raw))
	}
	require.Equal(t, 1, f.standin.CountWorkOrders())
	require.Equal(t, 2, f.standin.IdempotentReplays())

	other := f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody, withKey("key-2"))
	require.Equal(t, http.StatusCreated, other.status)
	require.NotEqual(t, first.object(t)["id"], other.object(t)["id"])
	require.Equal(t, 2, f.standin.CountWorkOrders())
}

func TestIdempotencyKeyReusedForSomethingElse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createWorkOrder(t, workOrderBody, withKey("key-1"))

	cases := map[string]struct{ method, path, body string }{
		"different body": {http.MethodPost, "/v1/work_orders", strings.Replace(workOrderBody, "urgent", "routine", 1)},
		"different path": {http.MethodPost, "/v1/refunds", workOrderBody},
		"different verb": {http.MethodDelete, "/v1/work_orders", workOrderBody},
	}
	for name, tc := range cases {
		res := f.call(t, tc.method, tc.path, tc.body, withKey("key-1"))
		require.Equal(t, http.StatusUnprocessableEntity, res.status, name)
		require.JSONEq(t, idempotencyConflict, string(res.raw), name)
	}
	require.Equal(t, 1, f.standin.CountWorkOrders())
	require.Zero(t, f.standin.CountRefunds())
}

func TestIdempotencyKeyInFlight(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.standin.Faults().HangNext(1)

	firstDone := make(chan response, 1)
	go func() { firstDone <- f.try(t, http.MethodPost, "/v1/work_orders", workOrderBody, withKey("key-1")) }()
	waitHeld(t, f.standin.Faults(), 1)

	res := f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody, withKey("key-1"))
	require.Equal(t, http.StatusConflict, res.status)
	e := res.apiError(t)
	require.Equal(t, "idempotency_error", e.Type)
	require.Contains(t, e.Message, "another in-progress request using this Idempotent Key")
	require.Contains(t, e.Message, "key-1")
	require.Zero(t, f.standin.CountWorkOrders(), "the first request is held before its effect")

	f.standin.Faults().Release()
	first := <-firstDone
	require.NoError(t, first.err)
	require.Equal(t, http.StatusCreated, first.status)

	replay := f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody, withKey("key-1"))
	require.Equal(t, "true", replay.header.Get("Idempotent-Replayed"))
	require.Equal(t, string(first.raw), string(replay.raw))
	require.Equal(t, 1, f.standin.CountWorkOrders())
}

func TestValidationFailureLeavesTheKeyFree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	bad := f.call(t, http.MethodPost, "/v1/refunds", `{"tenant_id":"t_100","amount_cents":0,"currency":"usd","reason":"r"}`, withKey("key-1"))
	require.Equal(t, http.StatusBadRequest, bad.status)

	good := f.call(t, http.MethodPost, "/v1/refunds", `{"tenant_id":"t_100","amount_cents":100,"currency":"usd","reason":"r"}`, withKey("key-1"))
	require.Equal(t, http.StatusCreated, good.status, "a request that never executed is not saved")
	require.Empty(t, good.header.Get("Idempotent-Replayed"))
	require.Equal(t, 1, f.standin.CountRefunds())
}

func TestNotFoundIsSavedLikeAnyExecutedResult(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first := f.call(t, http.MethodPost, "/v1/refunds/re_nope/cancel", "", withKey("key-1"))
	require.Equal(t, http.StatusNotFound, first.status)
	again := f.call(t, http.MethodPost, "/v1/refunds/re_nope/cancel", "", withKey("key-1"))
	require.Equal(t, http.StatusNotFound, again.status)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
}

func TestInjectedFailureLeavesTheKeyFree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.standin.Faults().FailNext(1, http.StatusServiceUnavailable)

	failed := f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody, withKey("key-1"))
	require.Equal(t, http.StatusServiceUnavailable, failed.status)
	require.Zero(t, f.standin.CountWorkOrders())

	retried := f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody, withKey("key-1"))
	require.Equal(t, http.StatusCreated, retried.status)
	require.Empty(t, retried.header.Get("Idempotent-Replayed"))
	require.Equal(t, 1, f.standin.CountWorkOrders())
}

func TestLostResponseIsReplayedOnRetry(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.NoError(t, f.standin.Faults().Add(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect}))

	ctx, giveUp := context.WithCancel(t.Context())
	lost := make(chan response, 1)
	go func() {
		lost <- f.try(t, http.MethodPost, "/v1/refunds", `{"tenant_id":"t_100","amount_cents":100,"currency":"usd","reason":"r"}`,
			withKey("key-1"), withContext(ctx))
	}()
	waitHeld(t, f.standin.Faults(), 1)
	require.Equal(t, 1, f.standin.CountRefunds(), "the refund happened")
	giveUp()
	require.ErrorIs(t, (<-lost).err, context.Canceled)

	// The original response is still held, yet the retry gets it at once.
	retry := f.call(t, http.MethodPost, "/v1/refunds", `{"tenant_id":"t_100","amount_cents":100,"currency":"usd","reason":"r"}`, withKey("key-1"))
	require.Equal(t, http.StatusCreated, retry.status)
	require.Equal(t, "true", retry.header.Get("Idempotent-Replayed"))
	require.Equal(t, f.standin.Refunds()[0].ID, retry.object(t)["id"])
	require.Equal(t, 1, f.standin.CountRefunds(), "no second refund")
}

func TestIdempotentCompensationRunsOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.createWorkOrder(t, workOrderBody)

	for range 3 {
		res := f.call(t, http.MethodPost, "/v1/work_orders/"+id+"/cancel", "", withKey("cancel-"+id))
		require.Equal(t, http.StatusOK, res.status)
		require.EqualValues(t, 1, res.object(t)["cancel_count"])
	}
	wo, _ := f.standin.WorkOrder(id)
	require.Equal(t, 1, wo.CancelCount)
}

func TestIdempotentDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first := f.call(t, http.MethodDelete, "/v1/tenants/t_100", "", withKey("del-1"))
	require.Equal(t, http.StatusOK, first.status)
	again := f.call(t, http.MethodDelete, "/v1/tenants/t_100", "", withKey("del-1"))
	require.Equal(t, http.StatusOK, again.status, "replayed rather than 404")
	require.Equal(t, string(first.raw), string(again.raw))
}

func TestIdempotencyKeyIgnoredOnGet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.call(t, http.MethodGet, "/v1/tenants/t_100", "", withKey("key-1"))
	res := f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody, withKey("key-1"))
	require.Equal(t, http.StatusCreated, res.status, "a GET does not claim the key")
	require.Zero(t, f.standin.IdempotentReplays())
}

func TestIdempotencyKeyTooLong(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.call(t, http.MethodPost, "/v1/work_orders", workOrderBody, withKey(strings.Repeat("k", 256)))
	require.Equal(t, http.StatusBadRequest, res.status)
	require.Zero(t, f.standin.CountWorkOrders())
}
