package compensation

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

func TestEntry(t *testing.T) {
	t.Parallel()
	cat, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)

	wo, _ := cat.Tool("create_work_order")
	e, err := Entry(wo, "call-1", "call-1:wo", json.RawMessage(`{"tenant_id":"t_100"}`))
	require.NoError(t, err)
	require.Equal(t, "cancel_work_order", e.CompensationTool)
	require.Equal(t, "call-1", e.SessionID)
	var snap Snapshot
	require.NoError(t, json.Unmarshal(e.ArgsSnapshot, &snap))
	require.Equal(t, "call-1:wo", snap.OperationKey)
	require.JSONEq(t, `{"tenant_id":"t_100"}`, string(snap.Args))

	sms, _ := cat.Tool("send_sms")
	e, err = Entry(sms, "call-1", "call-1:sms", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.Nil(t, e, "irreversible tools push nothing")
}
