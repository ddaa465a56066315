package callback_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/callback"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/platform"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// A push into a live Vapi call is an unsigned add-message spoken from the
// outcome: the failure wording, or the success wording of an outcome with
// a receipt. A success without a receipt is never pushed.
func TestRelayPushesToVapiOnlyFromTheOutcome(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		state  mt.InvocationState
		obs    mt.Observation
		pushed string
	}{
		"failure": {mt.InvocationFailed, mt.Observation{Status: mt.StatusError, Summary: "twilio refused", Wording: "I couldn't send the text."},
			"I couldn't send the text."},
		"success with a receipt": {mt.InvocationSucceeded, mt.Observation{Status: mt.StatusSuccess, Summary: "sent",
			Wording: "I've sent the text; Twilio reports it queued.", Receipt: &mt.Receipt{Provider: "twilio", ID: "SM1", Status: "queued"}},
			"I've sent the text; Twilio reports it queued."},
		"success without a receipt": {mt.InvocationSucceeded, mt.Observation{Status: mt.StatusSuccess, Summary: "sent", Wording: "I've sent the text."}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var (
				mu   sync.Mutex
				msgs []platform.VapiAddMessage
			)
			srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				require.Empty(t, r.Header.Get(callback.SignatureHeader))
				body, _ := io.ReadAll(r.Body)
				var m platform.VapiAddMessage
				require.NoError(t, json.Unmarshal(body, &m))
				mu.Lock()
				msgs = append(msgs, m)
				mu.Unlock()
			}))
			t.Cleanup(srv.Close)
			s := ledgertest.SQLite(t)
			ctx := t.Context()
			inv, _, err := s.InvocationInsert(ctx, ledger.Invocation{
				OperationKey: "op-1", AgentID: "vapi-agent", Tool: "send_sms", Args: json.RawMessage(`{}`), ArgsHash: "h",
				Route: mt.RouteWrite, State: mt.InvocationRunning, WorkflowID: "wf-1",
			})
			require.NoError(t, err)
			require.NoError(t, s.CallbackOwe(ctx, inv.ID, inv.AgentID, srv.URL+"/control"))
			require.NoError(t, s.InvocationFinish(ctx, inv.ID, tc.state, tc.obs))
			r, err := callback.New(callback.Config{Store: s, VapiPush: map[string]bool{"vapi-agent": true}, FirstBackoff: time.Hour})
			require.NoError(t, err)
			r.Sweep(ctx)

			cb, err := s.CallbackGet(ctx, inv.ID)
			require.NoError(t, err)
			mu.Lock()
			defer mu.Unlock()
			if tc.pushed == "" {
				require.Equal(t, ledger.CallbackFailed, cb.Status)
				require.Contains(t, cb.LastError, "no receipt")
				require.Empty(t, msgs)
				return
			}
			require.Equal(t, ledger.CallbackDelivered, cb.Status, cb.LastError)
			require.Len(t, msgs, 1)
			require.Equal(t, "add-message", msgs[0].Type)
			require.Equal(t, "system", msgs[0].Message.Role)
			require.True(t, msgs[0].TriggerResponseEnabled)
			require.Contains(t, msgs[0].Message.Content, tc.pushed)
		})
	}
}
