package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
)

// withElevenLabsAsync is withPlatforms with the ElevenLabs agent's tools
// async, waiting the given async budget.
func withElevenLabsAsync(budget string) func(*options) {
	return func(o *options) {
		withPlatforms("2s")(o)
		o.catalog = []byte(strings.Replace(string(o.catalog),
			"      secret_env: TEST_ELEVENLABS_SECRET\n      answer_budget: 2s\n",
			"      secret_env: TEST_ELEVENLABS_SECRET\n      async_tools: true\n      async_budget: "+budget+"\n", 1))
	}
}

// An async ElevenLabs tool waits its longer budget for the outcome: a
// provider held as long as the one that TestPlatformAnswersWithinBudget
// answers pending for under a 2 s budget is answered with the receipt's
// wording, and the text goes out once.
func TestPlatformElevenLabsAsyncAnswersTheOutcome(t *testing.T) {
	t.Parallel()
	e := setup(t, withElevenLabsAsync(roomyBudget))
	d := drivers[1]
	require.Equal(t, "elevenlabs", d.name)
	twilio := e.standins.Twilio.Faults()
	twilio.DelayNext(1, 8*time.Second)
	got := d.call(t, e, time.Now(), "call_1", "send_sms", smsToCaller)
	twilio.Release()
	require.False(t, got.err, got.text)
	require.Contains(t, got.text, "I've sent the text")
	require.NotContains(t, got.text, "still working on that")
	require.Equal(t, 1, e.standins.Twilio.CountMessages())

	out, err := e.ops.PlatformExport(e.ctx, "elevenlabs", "el-agent")
	require.NoError(t, err)
	require.Equal(t, 110.0, out.AnswerBudgetSeconds)
	require.Contains(t, string(out.Tools[0]), `"execution_mode":"async"`)
	require.Contains(t, string(out.Tools[0]), `"response_timeout_secs":115`)
}

// An async ElevenLabs tool also waits for a human: a text that needs a
// manager, approved while the platform's request is open, is answered with
// the receipt's wording rather than the approval wording.
func TestPlatformElevenLabsAsyncWaitsForTheApproval(t *testing.T) {
	t.Parallel()
	e := setup(t, withElevenLabsAsync(roomyBudget))
	d := drivers[1]
	type reply struct {
		status int
		body   []byte
		err    error
	}
	replied := make(chan reply, 1)
	req := d.tool(e, platformEnv[d.env], time.Now(), e.session, "call_1", "send_sms", `{"to":"+14155550177","body":"Your code is 1234."}`)
	client := openAPIClient(t)
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			replied <- reply{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		replied <- reply{status: resp.StatusCode, body: body, err: err}
	}()
	var pending apitype.Approval
	require.Eventually(t, func() bool {
		list, err := e.ops.Approvals(e.ctx, "pending")
		if err != nil {
			return false
		}
		for _, a := range list.Approvals {
			if a.SessionID == e.session && a.Tool == "send_sms" {
				pending = a
				return true
			}
		}
		return false
	}, 90*time.Second, 50*time.Millisecond)
	require.Zero(t, e.standins.Twilio.CountMessages(), "nothing goes out before the manager decides")
	_, err := e.ops.Approve(e.ctx, pending.ID, "the caller's other phone")
	require.NoError(t, err)

	r := <-replied
	require.NoError(t, r.err)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	got := d.read(t, r.body)
	require.False(t, got.err, got.text)
	require.Contains(t, got.text, "I've sent the text")
	require.NotContains(t, got.text, "asked a manager")
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
}
