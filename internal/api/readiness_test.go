package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
)

// TestProbeHandlerAnswersProbesOnly serves a worker-only process's probes:
// /healthz is up whatever /readyz says, /readyz answers 503 with the
// reason while not ready, and every other route is refused with 404.
func TestProbeHandlerAnswersProbesOnly(t *testing.T) {
	t.Parallel()
	state := apitype.Readiness{Status: apitype.ReadinessReady}
	h := ProbeHandler(func(context.Context) apitype.Readiness { return state })
	get := func(path string) (int, []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.Bytes()
	}

	code, _ := get("/readyz")
	require.Equal(t, http.StatusOK, code)
	for _, st := range []apitype.Readiness{
		{Status: apitype.ReadinessDraining},
		{Status: apitype.ReadinessUnavailable, WaitingFor: "temporal", Detail: "connection refused"},
	} {
		state = st
		code, body := get("/readyz")
		require.Equal(t, http.StatusServiceUnavailable, code)
		var got apitype.Readiness
		require.NoError(t, json.Unmarshal(body, &got))
		require.Equal(t, st, got)
		code, _ = get("/healthz")
		require.Equal(t, http.StatusOK, code, "up, though not ready")
	}

	code, body := get("/v1/tools")
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, string(body), "runs the worker only")
}
