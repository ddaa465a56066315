package server_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Operators see every session and every refusal in the console, counted,
// paged and filtered, as the API lists them: an agent held at a cap or
// refused for a bad call is in plain sight.
func TestConsoleListsSessionsAndRefusals(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	_, err = e.invoke("no_such_tool", e.key("unknown"), `{}`)
	requireRefusal(t, err, http.StatusNotFound, mt.CodeUnknownTool)

	ops := e.signIn(tools.DemoOpsKey)
	status, body := ops.get("/console/sessions")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `href="/console/sessions/`+url.PathEscape(e.session)+`"`)
	require.Contains(t, textOf(body), "Showing 1 of 1")

	status, body = ops.get("/console/sessions?agent=nobody")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, textOf(body), "No session matches.")
	require.Contains(t, textOf(body), "Showing 0 of 0 matching")

	status, body = ops.get("/console/refusals")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, textOf(body), "no_such_tool "+string(mt.CodeUnknownTool))
	require.Contains(t, textOf(body), "Showing 1 of 1")

	status, body = ops.get("/console/refusals?tool=lookup_tenant")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, textOf(body), "No refusal matches.")

	status, _ = ops.get("/console/refusals?age=7m")
	require.Equal(t, http.StatusBadRequest, status, "an age the console does not offer")
}
