package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// addFault posts a fault rule to a stand-in's admin API, as a person
// exercising maestro by hand would.
func addFault(t *testing.T, standinURL, rule string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, standinURL+fault.AdminPath, strings.NewReader(rule))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Less(t, resp.StatusCode, 300, "stand-in refused fault rule %s", rule)
}

func requireNextActions(t *testing.T, obs mt.Observation) {
	t.Helper()
	require.NotNil(t, obs.NextActions)
	require.NotEmpty(t, obs.NextActions.RootCause)
	require.NotEmpty(t, obs.NextActions.Remediation)
	require.NotEmpty(t, obs.NextActions.StopCondition)
}

// A lookup the provider answers 404 found nothing: the call worked, and
// the agent is told what to do next rather than handed a bare success or
// an error to retry.
func TestLookupOfAnUnknownTenantIsAWarningWithANextStep(t *testing.T) {
	t.Parallel()
	e := setup(t)

	resp, err := e.invoke("lookup_tenant", e.key("unknown"), `{"tenant_id":"t_999"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State)
	obs := resp.Observation
	require.Equal(t, mt.StatusWarning, obs.Status)
	require.Equal(t, mt.CodeNothingFound, obs.Code)
	requireNextActions(t, obs)
	require.Contains(t, obs.NextActions.Remediation, "Check the ID")
	require.Nil(t, obs.Receipt)
	require.NotNil(t, obs.Source)
	require.Equal(t, "lookup_tenant", obs.Source.Tool)
	require.Contains(t, string(obs.Payload), "No such tenant", "the provider's own answer travels with it")

	known, err := e.invoke("lookup_tenant", e.key("known"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.StatusSuccess, known.Observation.Status, "a lookup that finds the tenant stays a plain success")
}

// A 2xx answer holding nothing (an empty array or object, or an empty
// list envelope) is as empty as a 404.
func TestLookupAnsweredWithNothingIsAWarning(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for name, body := range map[string]string{
		"array": `[]`, "object": `{}`, "list": `{"object":"list","data":[],"has_more":false}`,
	} {
		addFault(t, e.standins.SandboxURL(), `{"action":"respond","status":200,"body":`+jsonString(body)+`,"method":"GET"}`)
		resp, err := e.invoke("lookup_tenant", e.key("empty-"+name), `{"tenant_id":"t_100"}`)
		require.NoError(t, err)
		require.Equal(t, mt.StatusWarning, resp.Observation.Status, name)
		require.Equal(t, mt.CodeNothingFound, resp.Observation.Code, name)
		requireNextActions(t, resp.Observation)
	}
}

func jsonString(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// A provider refusing maestro's credentials is maestro's fault: the agent
// is told to stop and hand over, never to change its arguments, for a read
// and for a write alike, and nothing is resent.
func TestProviderRefusingMaestrosCredentialsTellsTheAgentToHandOver(t *testing.T) {
	t.Parallel()
	e := setup(t)
	addFault(t, e.standins.SandboxURL(), `{"action":"fail","status":401,"times":10}`)

	for tool, args := range map[string]string{
		"lookup_tenant":     `{"tenant_id":"t_100"}`,
		"create_work_order": `{"tenant_id":"t_100","category":"plumbing","description":"Dripping tap","priority":"routine"}`,
	} {
		resp, err := e.invoke(tool, e.key(tool), args)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationFailed, resp.State, tool)
		obs := resp.Observation
		require.Equal(t, mt.StatusError, obs.Status, tool)
		require.Equal(t, mt.CodeMisconfigured, obs.Code, tool)
		requireNextActions(t, obs)
		require.Contains(t, obs.NextActions.Remediation, "hand over to a human", tool)
		require.Contains(t, obs.NextActions.StopCondition, "Do not retry or change arguments", tool)
		require.NotContains(t, obs.NextActions.Remediation, "argument", tool)
		require.Nil(t, obs.Receipt, tool)
	}
	require.Zero(t, e.standins.Sandbox.CountWorkOrders())
	rules := e.standins.Sandbox.Faults().Rules()
	require.Len(t, rules, 1)
	require.Equal(t, 8, rules[0].Times, "one attempt each: a refusal of credentials is never resent")
}

// A catalog naming a service this maestro has no configuration for is an
// operator's problem; the observation names the service and hands over.
func TestUnconfiguredServiceTellsTheAgentToHandOver(t *testing.T) {
	t.Parallel()
	cat := strings.Replace(string(tools.DemoCatalogYAML),
		"      service: sandbox\n      method: GET\n", "      service: backoffice\n      method: GET\n", 1)
	require.NotEqual(t, string(tools.DemoCatalogYAML), cat)
	e := setup(t, func(o *options) { o.catalog = []byte(cat) })

	resp, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	obs := resp.Observation
	require.Equal(t, mt.StatusError, obs.Status)
	require.Equal(t, mt.CodeMisconfigured, obs.Code)
	require.Contains(t, obs.NextActions.RootCause, `HTTP service "backoffice" is not configured`)
	require.Contains(t, obs.NextActions.StopCondition, "Do not retry or change arguments")
}
