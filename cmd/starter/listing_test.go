package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// approvals list pages with --limit and --cursor, filters, and prints the
// total and the next cursor; --json prints the page as the API answers it.
func TestCLIListsPageByPage(t *testing.T) {
	d := startDev(t)
	ops := []string{"--server", d.URL(), "--key", tools.DemoOpsKey}
	for i := range 3 {
		_, err := d.Store().ApprovalRequestInsert(t.Context(), ledger.ApprovalRequest{
			InvocationID: fmt.Sprintf("inv_cli_%d", i), OperationKey: fmt.Sprintf("cli-page-%d", i), SessionID: "cli-page",
			AgentID: "voice-agent", Tool: "issue_refund", Args: json.RawMessage(`{"amount_cents":100}`), ArgsHash: "h",
			ApproverRole: "manager", Effect: mt.EffectMoney, Reversibility: mt.ReversibilityIrreversible,
			TimeoutAt: time.Now().Add(time.Hour),
		})
		require.NoError(t, err)
	}

	out, errOut, code := run(t, append(ops, "approvals", "list", "--limit", "2", "--tool", "issue_refund")...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "2 of 3")
	next := regexp.MustCompile(`next: --cursor (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, next, out)

	out, errOut, code = run(t, append(ops, "approvals", "list", "--limit", "2", "--tool", "issue_refund", "--cursor", next[1], "--json")...)
	require.Equal(t, 0, code, errOut)
	var page apitype.ApprovalList
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
	require.Equal(t, 3, page.Total)
	require.Len(t, page.Approvals, 1)
	require.Equal(t, "cli-page-2", page.Approvals[0].OperationKey)
	require.Empty(t, page.Next, "the last page has no next")

	out, _, code = run(t, append(ops, "approvals", "list", "--limit", "501")...)
	require.Equal(t, 3, code, "the API refuses the limit: %s", out)
	require.Contains(t, out, "limit")
	out, _, code = run(t, append(ops, "approvals", "list", "--cursor", "not-a-cursor")...)
	require.Equal(t, 3, code, out)
	require.Contains(t, out, "cursor")

	require.NoError(t, d.Store().RefusalInsert(t.Context(), ledger.Refusal{AgentID: "voice-agent", SessionID: "cli-page", Code: mt.CodeAgentCapReached, Detail: "over the cap"}))
	out, errOut, code = run(t, append(ops, "refusals", "list", "--status", string(mt.CodeAgentCapReached))...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "over the cap")
	require.Contains(t, out, "1 of 1")

	out, errOut, code = run(t, append(ops, "sessions", "list", "--json")...)
	require.Equal(t, 0, code, errOut)
	var sessions apitype.SessionList
	require.NoError(t, json.Unmarshal([]byte(out), &sessions), out)
	require.NotNil(t, sessions.Sessions)
}
