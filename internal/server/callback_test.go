package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/callback"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/server"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

const (
	callbackSecret    = "whsec-test-voice-agent"
	callbackSecretEnv = "MAESTRO_CALLBACK_SECRET_VOICE"
)

// receiver is an agent's callback endpoint. It checks every signature,
// answers 500 to its first failFirst posts and takes slow over each post
// after that.
type receiver struct {
	failFirst int
	slow      time.Duration

	mu       sync.Mutex
	posts    int
	accepted []receivedCallback
	badSigs  int
}

type receivedCallback struct {
	invocationID string
	body         []byte
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.posts++
	n := rc.posts
	if err := callback.Verify([]byte(callbackSecret), r.Header.Get(callback.SignatureHeader), body, time.Now(), time.Minute); err != nil {
		rc.badSigs++
		rc.mu.Unlock()
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	rc.mu.Unlock()
	if n <= rc.failFirst {
		http.Error(w, "receiver down", http.StatusInternalServerError)
		return
	}
	time.Sleep(rc.slow) // a slow receiver, not a wait on the code under test
	rc.mu.Lock()
	rc.accepted = append(rc.accepted, receivedCallback{invocationID: r.Header.Get(callback.InvocationHeader), body: body})
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) snapshot() (posts, badSigs int, accepted []receivedCallback) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.posts, rc.badSigs, append([]receivedCallback(nil), rc.accepted...)
}

// withCallbackTo gives the demo voice agent a callback URL and its secret.
func withCallbackTo(url string) func(*options) {
	return func(o *options) {
		o.catalog = []byte(strings.Replace(string(tools.DemoCatalogYAML), "  - id: voice-agent\n",
			"  - id: voice-agent\n    callback_url: "+url+"\n    callback_secret_env: "+callbackSecretEnv+"\n", 1))
		o.getenv = func(name string) string {
			if name == callbackSecretEnv {
				return callbackSecret
			}
			return ""
		}
		// Sweeps far more often than the slow receiver answers, so a
		// second post of the same callback would show.
		o.callbacks = callback.Config{Interval: 50 * time.Millisecond, FirstBackoff: 100 * time.Millisecond}
	}
}

func TestPendingCallTellsItsAgentOnceSignedDespiteAFailingThenSlowReceiver(t *testing.T) {
	t.Parallel()
	rc := &receiver{failFirst: 1, slow: 1500 * time.Millisecond}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	e := setup(t, withCallbackTo(srv.URL+"/maestro/callbacks"))

	// A call answered final at once owes no callback.
	lookup, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.False(t, lookup.Pending)
	require.Nil(t, lookup.Callback, "the agent already heard the outcome")

	pending := e.requestRefund("refund")
	require.NotNil(t, pending.Callback, "a pending answer says a callback is owed")
	require.Equal(t, "pending", pending.Callback.Status)
	require.Zero(t, pending.Callback.Attempts)
	require.Contains(t, pending.Observation.NextActions.Remediation, "callback URL", "the agent is told it need not poll")
	// Asking again while pending owes nothing more.
	again, err := e.agent.Invocation(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.True(t, again.Pending)
	require.Equal(t, "pending", again.Callback.Status)

	_, err = e.ops.Approve(e.ctx, pending.ApprovalID, "duplicate confirmed in ledger")
	require.NoError(t, err)

	done := again
	require.Eventually(t, func() bool {
		got, err := e.agent.Invocation(e.ctx, pending.InvocationID)
		if err != nil {
			return false
		}
		done = got
		return done.Callback != nil && done.Callback.Status == "delivered"
	}, 30*time.Second, 50*time.Millisecond, "the callback is delivered")
	require.Equal(t, mt.InvocationSucceeded, done.State)
	require.Equal(t, 2, done.Callback.Attempts, "one 500, then the delivery")
	require.NotNil(t, done.Callback.DeliveredAt)
	require.Empty(t, done.Callback.LastError)

	posts, badSigs, accepted := rc.snapshot()
	require.Zero(t, badSigs, "every post is signed with the agent's secret")
	require.Equal(t, 2, posts, "no post while the slow one was in flight, none after")
	require.Len(t, accepted, 1, "delivered exactly once")
	require.Equal(t, pending.InvocationID, accepted[0].invocationID)
	want, err := json.Marshal(done.Observation)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(accepted[0].body), "the body is the final observation")
	require.NotNil(t, done.Observation.Receipt, "and it is the receipted success, not the pending answer")
}

func TestCallbackThatCannotBeSentSafelyRefusesToStart(t *testing.T) {
	t.Parallel()
	st := ledgertest.PostgresService(t)
	for name, tc := range map[string]struct {
		url      string
		loopback bool
		env      string
		want     []string
	}{
		"plain http outside dev mode": {"http://127.0.0.1:9/cb", false, callbackSecret,
			[]string{`agent "voice-agent"`, "callback_url", "dev mode"}},
		"secret missing from the environment": {"https://agent.example/cb", true, "",
			[]string{`agent "voice-agent"`, "callback_secret_env", callbackSecretEnv}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cat, err := tools.Load([]byte(strings.Replace(string(tools.DemoCatalogYAML), "  - id: voice-agent\n",
				"  - id: voice-agent\n    callback_url: "+tc.url+"\n    callback_secret_env: "+callbackSecretEnv+"\n", 1)))
			require.NoError(t, err)
			_, err = server.StartCore(t.Context(), server.CoreConfig{
				Store: st, Catalog: cat, Temporal: temporalClient, Connectors: connectors.Set{},
				LoopbackCallbacks: tc.loopback,
				Getenv:            func(string) string { return tc.env },
			})
			require.Error(t, err)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}
