package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

const otherAgentKey = "other-agent-key"

// withOtherAgent adds a second keyed agent to the demo catalog, allowed the
// same read and write tools as the voice agent.
func withOtherAgent(o *options) {
	sum := sha256.Sum256([]byte(otherAgentKey))
	agent := "agents:\n" +
		"  - id: other-agent\n" +
		"    description: A second agent sharing the deployment\n" +
		"    api_key_sha256: " + hex.EncodeToString(sum[:]) + "\n" +
		"    on_failure: none\n" +
		"    allow: [lookup_tenant, create_work_order, take_message]\n"
	o.catalog = []byte(strings.Replace(string(tools.DemoCatalogYAML), "agents:\n", agent, 1))
}

func TestASessionBelongsToTheAgentThatOpenedIt(t *testing.T) {
	t.Parallel()
	e := setup(t, withOtherAgent)
	wo := e.createWorkOrder("wo")
	other := apiclient.New(e.url, otherAgentKey, apiclient.Options{})

	t.Run("CallInAnotherAgentsSession", func(t *testing.T) {
		_, err := other.Invoke(e.ctx, invokeRequest(e.session, "create_work_order", "other:"+e.key("wo"), woArgs))
		requireRefusal(t, err, http.StatusForbidden, mt.CodeSessionForbidden)
	})
	t.Run("Rollback", func(t *testing.T) {
		_, err := other.Rollback(e.ctx, e.session, "not mine")
		requireRefusal(t, err, http.StatusForbidden, mt.CodeSessionForbidden)
	})
	t.Run("End", func(t *testing.T) {
		_, err := other.End(e.ctx, e.session, apitype.EndRequest{})
		requireRefusal(t, err, http.StatusForbidden, mt.CodeSessionForbidden)
	})
	t.Run("Get", func(t *testing.T) {
		_, err := other.Session(e.ctx, e.session)
		requireRefusal(t, err, http.StatusForbidden, mt.CodeSessionForbidden)
	})
	t.Run("UnknownSessionIsStillNotFound", func(t *testing.T) {
		_, err := other.Session(e.ctx, "call-unknown-"+randomID())
		requireRefusal(t, err, http.StatusNotFound, mt.CodeNotFound)
	})

	// Nothing the other agent tried touched the session.
	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Equal(t, mt.SessionActive, sess.State)
	require.Len(t, sess.Calls, 1)
	got, ok := e.standins.Sandbox.WorkOrder(wo)
	require.True(t, ok)
	require.Equal(t, 0, got.CancelCount, "the other agent's rollback undid nothing")
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders())

	// Every refusal is in the refusal log, naming the agent and the session.
	refusals, err := e.store.RefusalList(e.ctx, 100)
	require.NoError(t, err)
	var logged []string
	for _, r := range refusals {
		if r.SessionID == e.session && r.Code == mt.CodeSessionForbidden {
			require.Equal(t, "other-agent", r.AgentID)
			logged = append(logged, r.Detail)
		}
	}
	require.Len(t, logged, 4, "call, rollback, end and read are each logged: %v", logged)

	// The owner and operators still act on it.
	_, err = e.ops.Session(e.ctx, e.session)
	require.NoError(t, err)
	end, err := e.agent.End(e.ctx, e.session, apitype.EndRequest{})
	require.NoError(t, err)
	require.True(t, end.Ended)
}
