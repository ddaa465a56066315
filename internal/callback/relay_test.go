package callback_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/callback"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	mt "github.com/maestro-run/maestro/maestrotype"
)

var secret = []byte("whsec-test")

func TestSignatureCoversTimestampAndBody(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"status":"success"}`)
	h := callback.Sign(secret, now, body)
	require.Regexp(t, `^t=1800000000,v1=[0-9a-f]{64}$`, h)
	require.NoError(t, callback.Verify(secret, h, body, now.Add(time.Minute), 5*time.Minute))

	for name, tc := range map[string]struct {
		header string
		body   []byte
		secret []byte
		at     time.Time
	}{
		"other body":       {h, []byte(`{"status":"error"}`), secret, now},
		"other secret":     {h, body, []byte("guess"), now},
		"replayed later":   {h, body, secret, now.Add(time.Hour)},
		"timestamp moved":  {"t=1800000001," + h[len("t=1800000000,"):], body, secret, now},
		"malformed header": {"sha256=abc", body, secret, now},
	} {
		err := callback.Verify(tc.secret, tc.header, tc.body, tc.at, 5*time.Minute)
		require.ErrorIs(t, err, callback.ErrBadSignature, name)
	}
}

// owedFinal records a finished invocation that owes a callback to url.
func owedFinal(t *testing.T, s ledger.Store, url string) ledger.Invocation {
	t.Helper()
	ctx := t.Context()
	inv, _, err := s.InvocationInsert(ctx, ledger.Invocation{
		OperationKey: "op-1", AgentID: "voice-agent", Tool: "issue_refund", Args: json.RawMessage(`{}`), ArgsHash: "h",
		Route: mt.RouteGated, State: mt.InvocationAwaitingApproval, WorkflowID: "wf-1",
	})
	require.NoError(t, err)
	require.NoError(t, s.CallbackOwe(ctx, inv.ID, inv.AgentID, url))
	require.NoError(t, s.InvocationFinish(ctx, inv.ID, mt.InvocationRejected, mt.Observation{Status: mt.StatusError, Summary: "rejected"}))
	return inv
}

func TestRelayGivesUpAfterItsLastAttempt(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		posts.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	s := ledgertest.SQLite(t)
	inv := owedFinal(t, s, srv.URL)
	r, err := callback.New(callback.Config{Store: s, Secrets: map[string][]byte{"voice-agent": secret}, MaxAttempts: 2, FirstBackoff: time.Millisecond})
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		r.Sweep(t.Context())
		cb, err := s.CallbackGet(t.Context(), inv.ID)
		return err == nil && cb.Status == ledger.CallbackFailed
	}, 10*time.Second, 10*time.Millisecond)
	cb, err := s.CallbackGet(t.Context(), inv.ID)
	require.NoError(t, err)
	require.Equal(t, 2, cb.Attempts)
	require.Contains(t, cb.LastError, "503")
	require.EqualValues(t, 2, posts.Load())
}

func TestRelayDoesNotFollowRedirectsOrSendUnsigned(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		http.Redirect(w, r, "https://elsewhere.example/", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	s := ledgertest.SQLite(t)
	inv := owedFinal(t, s, srv.URL)
	r, err := callback.New(callback.Config{Store: s, Secrets: map[string][]byte{}, FirstBackoff: time.Hour})
	require.NoError(t, err)
	r.Sweep(t.Context())
	cb, err := s.CallbackGet(t.Context(), inv.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.CallbackPending, cb.Status)
	require.Contains(t, cb.LastError, "no signing secret")
	require.Zero(t, posts.Load(), "nothing goes out unsigned")

	r, err = callback.New(callback.Config{Store: s, Secrets: map[string][]byte{"voice-agent": secret}})
	require.NoError(t, err)
	require.NoError(t, s.CallbackMarkFailed(t.Context(), inv.ID, "retry now", 0))
	r.Sweep(t.Context())
	cb, err = s.CallbackGet(t.Context(), inv.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.CallbackPending, cb.Status, "a redirect is not an acceptance")
	require.Contains(t, cb.LastError, "307")
	require.EqualValues(t, 1, posts.Load())
}

func TestRelayRefusesBadConfig(t *testing.T) {
	t.Parallel()
	_, err := callback.New(callback.Config{})
	require.ErrorContains(t, err, "store")
	_, err = callback.New(callback.Config{Store: ledgertest.SQLite(t), Interval: -time.Second})
	require.ErrorContains(t, err, "negative")
}
