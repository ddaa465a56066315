package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/server"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// run executes the CLI in-process and returns stdout, stderr and the exit
// status main would use.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	code := 0
	var ex *exitError
	switch {
	case errors.As(err, &ex):
		code = ex.code
	case err != nil:
		errOut.WriteString(err.Error())
		code = 1
	}
	return out.String(), errOut.String(), code
}

// startDev runs maestro in dev mode for one test: embedded Temporal on
// free ports, a SQLite ledger and stand-ins, stopped at cleanup.
func startDev(t *testing.T) *server.Server {
	t.Helper()
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	d, err := server.Start(t.Context(), server.Config{
		Dev: true, HTTPAddr: "127.0.0.1:0", DataDir: t.TempDir(), TemporalPort: port,
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Stop(t.Context()) })
	return d
}

func TestCLIAgainstDevMode(t *testing.T) {
	d := startDev(t)
	global := []string{"--server", d.URL(), "--key", tools.DemoAgentKey}

	t.Run("ToolsList", func(t *testing.T) {
		out, _, code := run(t, append(global, "tools", "list", "--json")...)
		require.Equal(t, 0, code)
		var list apitype.ToolList
		require.NoError(t, json.Unmarshal([]byte(out), &list))
		require.NotEmpty(t, list.Tools)

		text, _, code := run(t, append(global, "tools", "list")...)
		require.Equal(t, 0, code)
		require.Contains(t, text, "lookup_tenant")
	})

	t.Run("InvokeThenShow", func(t *testing.T) {
		out, _, code := run(t, append(global, "invocations", "invoke", "lookup_tenant",
			"--args", `{"tenant_id":"t_100"}`, "--session", "cli-1", "--operation-key", "cli-1:lookup", "--json")...)
		require.Equal(t, 0, code, out)
		var inv apitype.Invocation
		require.NoError(t, json.Unmarshal([]byte(out), &inv))
		require.Equal(t, mt.InvocationSucceeded, inv.State)

		shown, _, code := run(t, append(global, "invocations", "show", inv.InvocationID)...)
		require.Equal(t, 0, code)
		require.Contains(t, shown, inv.InvocationID)
		require.Contains(t, shown, "succeeded")
	})

	t.Run("RefusalExitsThree", func(t *testing.T) {
		out, _, code := run(t, append(global, "invocations", "invoke", "no_such_tool", "--session", "cli-1", "--operation-key", "cli-1:x", "--json")...)
		require.Equal(t, 3, code)
		require.Contains(t, out, string(mt.CodeUnknownTool))
	})

	t.Run("BadArgsJSON", func(t *testing.T) {
		_, errOut, code := run(t, append(global, "invocations", "invoke", "lookup_tenant", "--session", "cli-1", "--args", "{oops")...)
		require.Equal(t, 1, code)
		require.Contains(t, errOut, "not valid JSON")
	})

	t.Run("WaitsForGatedCalls", func(t *testing.T) {
		out, _, code := run(t, append(global, "invocations", "invoke", "delete_tenant_account",
			"--args", `{"tenant_id":"t_102"}`, "--session", "cli-1", "--operation-key", "cli-1:delete", "--json")...)
		require.Equal(t, 0, code)
		require.Contains(t, out, string(mt.InvocationAwaitingApproval))
		var inv apitype.Invocation
		require.NoError(t, json.Unmarshal([]byte(out), &inv))

		ops := []string{"--server", d.URL(), "--key", tools.DemoOpsKey}
		list, _, code := run(t, append(ops, "approvals", "list")...)
		require.Equal(t, 0, code)
		require.Contains(t, list, inv.ApprovalID)

		shown, _, code := run(t, append(ops, "approvals", "approve", inv.ApprovalID, "--reason", "tenant confirmed by phone")...)
		require.Equal(t, 0, code, shown)
		require.Contains(t, shown, "approved")
		require.Contains(t, shown, "operator:demo-manager")

		again, _, code := run(t, append(ops, "approvals", "reject", inv.ApprovalID)...)
		require.Equal(t, 3, code, "a decided request cannot be decided again")
		require.Contains(t, again, string(mt.CodeApprovalClosed))

		waited, _, code := run(t, append(global, "invocations", "show", inv.InvocationID)...)
		require.Equal(t, 0, code)
		require.Contains(t, waited, inv.InvocationID)
	})

	t.Run("ApprovalShowsFactsWithProvenance", func(t *testing.T) {
		// The agent runtime stated the caller's number at the session's
		// first call; the demo catalog does not let the SMS rule rest on it.
		_, err := d.Store().SessionUpsert(t.Context(), ledger.Session{ID: "cli-4", AgentID: "voice-agent",
			Facts: map[string]string{"caller_number": "+14155550100"}, Provenance: map[string]mt.Provenance{"caller_number": mt.ProvenanceAgentDeclared}})
		require.NoError(t, err)
		out, _, code := run(t, append(global, "invocations", "invoke", "send_sms", "--session", "cli-4", "--operation-key", "cli-4:sms",
			"--args", `{"to":"+14155550100","body":"Booked."}`, "--json")...)
		require.Equal(t, 0, code, out)
		var inv apitype.Invocation
		require.NoError(t, json.Unmarshal([]byte(out), &inv))
		require.Equal(t, mt.InvocationAwaitingApproval, inv.State)

		ops := []string{"--server", d.URL(), "--key", tools.DemoOpsKey}
		shown, _, code := run(t, append(ops, "approvals", "show", inv.ApprovalID)...)
		require.Equal(t, 0, code, shown)
		require.Contains(t, shown, "caller_number = +14155550100  (agent-declared)")
		require.Regexp(t, `effect\s+write\n`, shown)
		require.Regexp(t, `reversibility\s+irreversible\n`, shown, "the approver sees the text cannot be unsent")
	})

	t.Run("ShowsStateBeforeAndAfter", func(t *testing.T) {
		out, _, code := run(t, append(global, "invocations", "invoke", "delete_tenant_account",
			"--args", `{"tenant_id":"t_103"}`, "--session", "cli-5", "--operation-key", "cli-5:delete", "--json")...)
		require.Equal(t, 0, code, out)
		var inv apitype.Invocation
		require.NoError(t, json.Unmarshal([]byte(out), &inv))
		ops := []string{"--server", d.URL(), "--key", tools.DemoOpsKey}
		out, _, code = run(t, append(ops, "approvals", "approve", inv.ApprovalID, "--reason", "tenant confirmed by phone")...)
		require.Equal(t, 0, code, out)
		done, err := apiclient.New(d.URL(), tools.DemoAgentKey, apiclient.Options{}).Wait(t.Context(), inv.InvocationID)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)

		// The tenant record before the delete and as read back after it,
		// line by line side by side.
		shown, _, code := run(t, append(global, "invocations", "show", inv.InvocationID)...)
		require.Equal(t, 0, code, shown)
		require.Regexp(t, `before: tool lookup_tenant at .*\| after: tool lookup_tenant at `, shown)
		require.Regexp(t, `"name": "Tom Becker",\s+\|   "name": "Tom Becker",`, shown)
		require.Regexp(t, `"deleted": false,?\s+\|   "deleted": true`, shown)

		out, _, code = run(t, append(global, "invocations", "show", inv.InvocationID, "--json")...)
		require.Equal(t, 0, code, out)
		var asJSON apitype.Invocation
		require.NoError(t, json.Unmarshal([]byte(out), &asJSON))
		require.NotNil(t, asJSON.StateReads)
		require.True(t, asJSON.StateReads.Before.Found)
		deleted := func(raw json.RawMessage) any {
			var m map[string]any
			require.NoError(t, json.Unmarshal(raw, &m))
			return m["deleted"]
		}
		require.Equal(t, false, deleted(asJSON.StateReads.Before.State))
		require.Equal(t, true, deleted(asJSON.StateReads.After.State))

		// The session view carries them on the call, for the console.
		sess, err := apiclient.New(d.URL(), tools.DemoOpsKey, apiclient.Options{}).Session(t.Context(), "cli-5")
		require.NoError(t, err)
		require.Len(t, sess.Calls, 1)
		require.NotNil(t, sess.Calls[0].StateReads)
		require.Equal(t, asJSON.StateReads.Before.ReadAt.UTC(), sess.Calls[0].StateReads.Before.ReadAt.UTC())
		require.Equal(t, true, deleted(sess.Calls[0].StateReads.After.State))
	})

	t.Run("SessionsShowRollbackEnd", func(t *testing.T) {
		_, _, code := run(t, append(global, "invocations", "invoke", "create_work_order", "--session", "cli-2", "--operation-key", "cli-2:wo",
			"--args", `{"tenant_id":"t_100","category":"hvac","description":"No heat","priority":"urgent"}`)...)
		require.Equal(t, 0, code)

		shown, _, code := run(t, append(global, "sessions", "show", "cli-2")...)
		require.Equal(t, 0, code, shown)
		require.Contains(t, shown, "cancel_work_order")

		out, _, code := run(t, append(global, "sessions", "rollback", "cli-2", "--reason", "test")...)
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "compensated")

		ops := []string{"--server", d.URL(), "--key", tools.DemoOpsKey}
		out, _, code = run(t, append(ops, "sessions", "resolve", "cli-2", "--reason", "nothing to resolve")...)
		require.Equal(t, 3, code, "a session that is not halted cannot be resolved")
		require.Contains(t, out, "not halted")

		out, _, code = run(t, append(global, "sessions", "end", "cli-2", "--json")...)
		require.Equal(t, 0, code, out)
		require.Contains(t, out, `"ended": true`)
		out, _, code = run(t, append(global, "sessions", "end", "cli-2", "--json")...)
		require.Equal(t, 0, code, out)
		require.Contains(t, out, `"ended": false`)
	})

	t.Run("AuditExitsThreeOnDivergence", func(t *testing.T) {
		ops := []string{"--server", d.URL(), "--key", tools.DemoOpsKey}
		out, _, code := run(t, append(ops, "audit")...)
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "0 divergence(s)")

		key := "cli-1:rogue-refund"
		_, err := d.Store().EffectClaim(t.Context(), ledger.EffectClaimParams{OperationKey: key, Tool: "issue_refund", PayloadHash: "h", Owner: "rogue", LeaseTTL: time.Minute})
		require.NoError(t, err)
		require.NoError(t, d.Store().EffectSettle(t.Context(), ledger.EffectSettleParams{OperationKey: key, Owner: "rogue", Status: mt.EffectSucceeded}))

		out, _, code = run(t, append(ops, "audit", "--json")...)
		require.Equal(t, 3, code)
		require.Contains(t, out, ledger.AuditNoApproval)
		require.Contains(t, out, key)
	})
}

func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--help"}, {"tools", "--help"}, {"tools", "list", "--help"},
		{"invocations", "--help"}, {"invocations", "invoke", "--help"}, {"invocations", "show", "--help"},
		{"approvals", "--help"}, {"approvals", "list", "--help"}, {"approvals", "show", "--help"},
		{"approvals", "approve", "--help"}, {"approvals", "reject", "--help"}, {"approvals", "modify", "--help"},
		{"audit", "--help"}, {"sessions", "--help"}, {"sessions", "show", "--help"}, {"sessions", "rollback", "--help"},
		{"sessions", "resolve", "--help"}, {"sessions", "end", "--help"},
		{"catalog", "--help"}, {"catalog", "init", "--help"},
	} {
		out, _, code := run(t, args...)
		require.Equal(t, 0, code, args)
		require.Contains(t, out, "Usage:", args)
	}
}

func TestUnreachableServerIsAClearError(t *testing.T) {
	t.Parallel()
	_, errOut, code := run(t, "--server", "http://127.0.0.1:1", "tools", "list")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "error calling maestro")
}
