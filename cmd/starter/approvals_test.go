package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
)

// approvals show names whose vouch an auto-approval rested on, and shows
// other events' details as before.
func TestApprovalEventsNameWhoseVouchARuleRestedOn(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var out bytes.Buffer
	require.NoError(t, printEvents(&out, []apitype.ApprovalEvent{
		{Kind: "requested", Actor: "agent:voice-agent", At: at},
		{Kind: "auto_approved", Actor: "rule:args.to == session.caller_number", At: at,
			Detail: json.RawMessage(`{"rested_on":[{"fact":"caller_number","value":"+14155550188","provenance":"operator:demo-manager"}]}`)},
		{Kind: "notified", Actor: "maestro", At: at, Detail: json.RawMessage(`{"stage":"first"}`)},
	}))
	require.Contains(t, out.String(), "rested on caller_number = +14155550188 vouched for by operator:demo-manager")
	require.Equal(t, 1, bytes.Count(out.Bytes(), []byte("rested on")), out.String())
}
