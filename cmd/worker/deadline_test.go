package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// elevenLabsSecret is the bearer secret the tests' ElevenLabs agent is
// called with, from $TEST_ELEVENLABS_SECRET.
const elevenLabsSecret = "elevenlabs-tool-secret"

// withElevenLabsAgent adds to a catalog an ElevenLabs agent that may issue
// refunds, its tools async with the given budget.
func withElevenLabsAgent(catalog, budget string) string {
	agent := "agents:\n  - id: el-agent\n    description: ElevenLabs assistant\n" +
		"    api_key_sha256: " + tools.HashKey("el-agent-key") + "\n    allow: [issue_refund]\n" +
		"    platform:\n      kind: elevenlabs\n      secret_env: TEST_ELEVENLABS_SECRET\n" +
		"      async_tools: true\n      async_budget: " + budget + "\n"
	return strings.Replace(catalog, "agents:\n", agent, 1)
}

// TestPlatformAnswerOutlastsTheWriteTimeout runs an ElevenLabs async
// issue_refund on the real binary with a server write timeout far shorter
// than the agent's budget: the manager approves it late, just before the
// budget runs out, and the platform still reads the receipted answer,
// where a server that held every request to its write timeout would have
// sent nothing once the refund was made.
func TestPlatformAnswerOutlastsTheWriteTimeout(t *testing.T) {
	t.Parallel()
	const (
		writeTimeout = 2 * time.Second
		budget       = 10 * time.Second
		// The adapter stops waiting 2s before the budget ends; the
		// approval leaves the refund time to run before then.
		approveAt = 6 * time.Second
	)
	catalog := writeCatalog(t, withElevenLabsAgent(string(tools.DemoCatalogYAML), budget.String()))
	cmd, stderr, _, url := startDevWith(t, []string{"TEST_ELEVENLABS_SECRET=" + elevenLabsSecret},
		"--catalog", catalog, "--http-write-timeout", writeTimeout.String())
	ops := apiclient.New(url, tools.DemoOpsKey, apiclient.Options{})

	body, err := json.Marshal(map[string]any{
		"tenant_id": "t_100", "amount_cents": 12500, "reason": "duplicate rent payment",
		"system__conversation_id": "conv_late_approval", "system__caller_id": "+14155550100",
	})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/v1/platforms/elevenlabs/el-agent/tools/issue_refund", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+elevenLabsSecret)
	type reply struct {
		status int
		body   []byte
		err    error
		after  time.Duration
	}
	replied := make(chan reply, 1)
	sent := time.Now()
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			replied <- reply{err: err, after: time.Since(sent)}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		replied <- reply{status: resp.StatusCode, body: b, err: err, after: time.Since(sent)}
	}()

	var pending apitype.Approval
	require.Eventually(t, func() bool {
		select {
		case r := <-replied:
			t.Fatalf("answered before a manager was asked, after %s: %d %s %v\n%s", r.after, r.status, r.body, r.err, stderr.String())
		default:
		}
		list, err := ops.Approvals(t.Context(), "pending")
		if err != nil || len(list.Approvals) == 0 {
			return false
		}
		pending = list.Approvals[0]
		return true
	}, time.Minute, 50*time.Millisecond, stderr.String())
	require.Equal(t, "issue_refund", pending.Tool)
	// The late decision is the scenario: the platform's request stays open
	// past the write timeout while the manager makes up their mind.
	select {
	case r := <-replied:
		t.Fatalf("answered before the manager decided, after %s: %d %s %v", r.after, r.status, r.body, r.err)
	case <-time.After(time.Until(sent.Add(approveAt))):
	}
	_, err = ops.Approve(t.Context(), pending.ID, "duplicate payment confirmed")
	require.NoError(t, err)

	r := <-replied
	require.NoError(t, r.err, "the answer was dropped after %s\n%s", r.after, stderr.String())
	require.Greater(t, r.after, writeTimeout, "the answer came after the server's write timeout")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var ans apitype.PlatformAnswer
	require.NoError(t, json.Unmarshal(r.body, &ans), "%s", r.body)
	require.Equal(t, mt.InvocationSucceeded, ans.State, "%s", r.body)
	require.NotNil(t, ans.Receipt, "%s", r.body)
	require.Contains(t, ans.Wording, ans.Receipt.ID, "the wording is spoken from the receipt")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), stderr.String())
}
