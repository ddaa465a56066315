//go:build crashtest

package crashtest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/failpoint"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/standin"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// TestCrashBetweenThePartsOfAPage kills the worker after a page's text is
// sent and recorded and before its email is sent. The restarted worker
// sends only the email: one of each.
func TestCrashBetweenThePartsOfAPage(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	sins, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = sins.Close() })
	dsn := ledgertest.PostgresDSN(t)
	session := "crash-page-" + randomHex()
	env := h.env(sins, dsn, "tq-"+session, false)
	key := session + ":page"
	req := apitype.InvokeRequest{
		SessionID: session, Tool: "escalate_to_human", OperationKey: key,
		Args: json.RawMessage(`{"reason":"Water through the ceiling","urgency":"emergency","callback_number":"` + callerNumber + `"}`),
	}

	args := []string{"--temporal", h.temporal}
	w := startWorker(t, h.bin, "armed", args, append(env, "MAESTRO_FAILPOINT="+failpoint.BetweenParts))
	agent := apiclient.New(w.url, agentKey, apiclient.Options{})
	_, _ = agent.Invoke(ctx, req) // the worker dies under it
	w.waitKilled(time.Minute)

	ledger, err := ledger.OpenPostgres(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ledger.Close() })
	sms, err := ledger.EffectGet(ctx, key+"#sms")
	require.NoError(t, err)
	require.Equal(t, mt.EffectSucceeded, sms.Status, "the text is recorded before the kill")
	require.Equal(t, 1, sins.Twilio.CountMessages())
	require.Zero(t, sins.SES.CountEmails(), "the email was not sent before the kill")

	w = startWorker(t, h.bin, "restarted", args, env)
	agent = apiclient.New(w.url, agentKey, apiclient.Options{})
	resp, err := agent.Invoke(ctx, req)
	require.NoError(t, err)
	resp, err = agent.Wait(ctx, resp.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, sins.Twilio.CountMessages(), "exactly one text")
	require.Equal(t, 1, sins.SES.CountEmails(), "exactly one email")
	require.Equal(t, sms.Receipt.ID, resp.Observation.Receipt.Fields["message_sid"])
}
