package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// requireNothingRan asserts no provider saw an effect and the ledger holds
// no effect for the test's session.
func (e *env) requireNothingRan() {
	e.t.Helper()
	require.Zero(e.t, e.standins.Twilio.CountMessages(), "no SMS")
	require.Zero(e.t, e.standins.SES.CountEmails(), "no email")
	require.Zero(e.t, e.standins.Sandbox.CountWorkOrders(), "no work order")
	require.Zero(e.t, e.standins.Sandbox.CountRefunds(), "no refund")
	invs, err := e.store.InvocationListBySession(e.ctx, e.session)
	require.NoError(e.t, err)
	require.Empty(e.t, invs, "a refused call is never recorded as an invocation")
}

func requireRefusal(t *testing.T, err error, status int, code mt.Code) mt.Observation {
	t.Helper()
	var ref *apiclient.Error
	require.ErrorAs(t, err, &ref)
	require.Equal(t, status, ref.StatusCode)
	require.Equal(t, code, ref.Observation.Code)
	require.Equal(t, mt.StatusError, ref.Observation.Status)
	na := ref.Observation.NextActions
	require.NotNil(t, na)
	require.NotEmpty(t, na.RootCause)
	require.NotEmpty(t, na.Remediation)
	require.NotEmpty(t, na.StopCondition)
	return ref.Observation
}

func TestRefusalsRunNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)

	t.Run("UnknownTool", func(t *testing.T) {
		_, err := e.invoke("launch_rocket", e.key("rocket"), `{}`)
		requireRefusal(t, err, http.StatusNotFound, mt.CodeUnknownTool)
	})
	t.Run("ToolNotInAllowlist", func(t *testing.T) {
		_, err := e.invoke("cancel_work_order", e.key("cancel"), `{"work_order_id":"wo_1"}`)
		requireRefusal(t, err, http.StatusForbidden, mt.CodeToolNotAllowed)
	})
	t.Run("InvalidArgsNameTheField", func(t *testing.T) {
		_, err := e.invoke("send_sms", e.key("sms"), `{"to":"555-1234","body":"hi"}`)
		obs := requireRefusal(t, err, http.StatusUnprocessableEntity, mt.CodeInvalidArgs)
		require.Contains(t, obs.NextActions.Remediation, "to")
		require.Contains(t, string(obs.Payload), "/to")
	})
	t.Run("MissingRequiredArg", func(t *testing.T) {
		_, err := e.invoke("create_work_order", e.key("wo"), `{"tenant_id":"t_100"}`)
		requireRefusal(t, err, http.StatusUnprocessableEntity, mt.CodeInvalidArgs)
	})
	t.Run("UnknownArg", func(t *testing.T) {
		_, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100","drop":"table"}`)
		requireRefusal(t, err, http.StatusUnprocessableEntity, mt.CodeInvalidArgs)
	})
	t.Run("MissingSession", func(t *testing.T) {
		_, err := e.agent.Invoke(e.ctx, invokeRequest("", "lookup_tenant", e.key("nosession"), `{"tenant_id":"t_100"}`))
		requireRefusal(t, err, http.StatusBadRequest, mt.CodeInvalidRequest)
	})
	t.Run("MissingOperationKey", func(t *testing.T) {
		_, err := e.invoke("lookup_tenant", "", `{"tenant_id":"t_100"}`)
		requireRefusal(t, err, http.StatusBadRequest, mt.CodeInvalidRequest)
	})
	t.Run("ReservedOperationKeys", func(t *testing.T) {
		_, err := e.invoke("lookup_tenant", "undo-undo_0123", `{"tenant_id":"t_100"}`)
		requireRefusal(t, err, http.StatusBadRequest, mt.CodeInvalidRequest)
		_, err = e.invoke("lookup_tenant", "postcall:"+e.session+":x", `{"tenant_id":"t_100"}`)
		requireRefusal(t, err, http.StatusBadRequest, mt.CodeInvalidRequest)
	})
	t.Run("MalformedOperationKey", func(t *testing.T) {
		_, err := e.invoke("lookup_tenant", "../../etc", `{"tenant_id":"t_100"}`)
		requireRefusal(t, err, http.StatusBadRequest, mt.CodeInvalidRequest)
	})
	e.requireNothingRan()

	refusals, err := e.store.RefusalList(e.ctx, 50)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(refusals), 8, "every refusal is logged")
}

func TestMalformedRequestsGet4xxObservations(t *testing.T) {
	t.Parallel()
	e := setup(t)
	valid := `{"session_id":"` + e.session + `","tool":"lookup_tenant","args":{"tenant_id":"t_100"},"operation_key":"` + e.key("k") + `"}`

	tests := []struct {
		name        string
		key         string
		contentType string
		body        string
		status      int
		code        mt.Code
	}{
		{"NoKey", "", "application/json", valid, http.StatusUnauthorized, mt.CodeUnauthorized},
		{"WrongKey", "not-a-key", "application/json", valid, http.StatusUnauthorized, mt.CodeUnauthorized},
		{"OpsKeyIsNotAnAgent", tools.DemoOpsKey, "application/json", valid, http.StatusUnauthorized, mt.CodeUnauthorized},
		{"MalformedJSON", tools.DemoAgentKey, "application/json", `{"tool":`, http.StatusBadRequest, mt.CodeInvalidRequest},
		{"TrailingData", tools.DemoAgentKey, "application/json", valid + `{}`, http.StatusBadRequest, mt.CodeInvalidRequest},
		{"UnknownField", tools.DemoAgentKey, "application/json", `{"tool":"lookup_tenant","sudo":true}`, http.StatusBadRequest, mt.CodeInvalidRequest},
		{"EmptyBody", tools.DemoAgentKey, "application/json", ``, http.StatusBadRequest, mt.CodeInvalidRequest},
		{"WrongContentType", tools.DemoAgentKey, "text/plain", valid, http.StatusUnsupportedMediaType, mt.CodeUnsupportedMedia},
		{"Oversized", tools.DemoAgentKey, "application/json", `{"tool":"lookup_tenant","args":{"tenant_id":"` + strings.Repeat("1", 70<<10) + `"}}`, http.StatusRequestEntityTooLarge, mt.CodePayloadTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+"/v1/invocations", bytes.NewBufferString(tt.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", tt.contentType)
			if tt.key != "" {
				req.Header.Set("Authorization", "Bearer "+tt.key)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tt.status, resp.StatusCode)
			var body struct {
				Observation mt.Observation `json:"observation"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
			require.Equal(t, tt.code, body.Observation.Code)
			require.Equal(t, mt.StatusError, body.Observation.Status)
		})
	}
	e.requireNothingRan()
}

func TestToolsListShowsOnlyTheAgentsAllowlist(t *testing.T) {
	t.Parallel()
	e := setup(t)

	list, err := e.agent.Tools(e.ctx)
	require.NoError(t, err)
	require.Equal(t, "voice-agent", list.Agent)
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
		require.NotEmpty(t, tl.InputSchema, tl.Name)
		require.NotEmpty(t, tl.Route, tl.Name)
	}
	require.True(t, names["send_sms"])
	require.False(t, names["cancel_work_order"], "compensations are not offered to agents")
	require.False(t, names["cancel_refund"])

	_, err = apiclient.New(e.url, "wrong", apiclient.Options{}).Tools(e.ctx)
	requireRefusal(t, err, http.StatusUnauthorized, mt.CodeUnauthorized)
}

func TestInvocationsAreVisibleOnlyToTheirAgent(t *testing.T) {
	t.Parallel()
	e := setup(t)

	resp, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	got, err := e.agent.Invocation(e.ctx, resp.InvocationID)
	require.NoError(t, err)
	require.Equal(t, resp.Observation, got.Observation)

	_, err = e.agent.Invocation(e.ctx, "inv_does_not_exist")
	requireRefusal(t, err, http.StatusNotFound, mt.CodeNotFound)
}
