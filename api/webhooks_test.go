package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/standin/twilio"
	"github.com/maestro-run/maestro/store"
	"github.com/maestro-run/maestro/store/storetest"
	"github.com/maestro-run/maestro/tools"
)

const statusPath = "/v1/webhooks/twilio/status"

// The stand-in signs its callbacks as Twilio does; maestro verifies them
// with twilio-go's validator and moves the receipt to what the carrier
// reported last.
func TestTwilioStatusCallbackFromTheStandInUpdatesTheReceipt(t *testing.T) {
	t.Parallel()
	st := storetest.SQLite(t)
	srv, _ := webhookServer(t, st, twilio.DefaultAuthToken)

	// Twilio calls back only after it has answered the send, and maestro
	// records the receipt from that answer; the gate holds callbacks until
	// the receipt is in the ledger, as the two would be ordered in practice.
	settled := make(chan struct{})
	maestro := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-settled
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(maestro.Close)

	tw, err := twilio.New(twilio.Options{})
	require.NoError(t, err)
	provider := httptest.NewServer(tw)
	t.Cleanup(provider.Close)

	sid := sendWithCallback(t, provider.URL, maestro.URL+statusPath)
	key := settleSMS(t, st, sid)
	close(settled)

	require.Eventually(t, func() bool {
		eff, err := st.EffectGet(t.Context(), key)
		return err == nil && eff.Receipt.Status == "delivered"
	}, 5*time.Second, 20*time.Millisecond, "the delivered callback never reached the receipt")
}

func TestSignedTwilioStatusCallback(t *testing.T) {
	t.Parallel()
	st := storetest.SQLite(t)
	srv, _ := webhookServer(t, st, twilio.DefaultAuthToken)
	key := settleSMS(t, st, "SM_signed")

	resp := postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_signed", "delivered"), nil)
	require.Equal(t, http.StatusNoContent, resp.Code)
	require.Equal(t, "delivered", receiptStatus(t, st, key))

	// A message no receipt carries is acknowledged, so Twilio does not
	// retry it, and changes nothing.
	resp = postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_elsewhere", "delivered"), nil)
	require.Equal(t, http.StatusNoContent, resp.Code)

	resp = postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_signed", "teleported"), nil)
	require.Equal(t, http.StatusBadRequest, resp.Code, "a status Twilio never sends")
	require.Equal(t, "delivered", receiptStatus(t, st, key))
}

func TestForgedTwilioStatusCallbackIsRefusedAndLogged(t *testing.T) {
	t.Parallel()
	form := statusForm("SM_target", "failed")
	for name, forge := range map[string]func(r *http.Request){
		"no signature": func(r *http.Request) { r.Header.Del("X-Twilio-Signature") },
		"another account's token": func(r *http.Request) {
			r.Header.Set("X-Twilio-Signature", twilio.Signature("someoneelsestoken", "http://example.com"+statusPath, form))
		},
		"signed for another URL": func(r *http.Request) {
			r.Header.Set("X-Twilio-Signature", twilio.Signature(twilio.DefaultAuthToken, "http://attacker.example"+statusPath, form))
		},
		"body altered after signing": func(r *http.Request) {
			r.Header.Set("X-Twilio-Signature", twilio.Signature(twilio.DefaultAuthToken, "http://example.com"+statusPath, statusForm("SM_target", "delivered")))
		},
		"a repeated parameter": func(r *http.Request) {
			twice := statusForm("SM_target", "failed")
			twice.Add("MessageStatus", "delivered")
			*r = *httptest.NewRequest(http.MethodPost, "http://example.com"+statusPath, strings.NewReader(twice.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("X-Twilio-Signature", twilio.Signature(twilio.DefaultAuthToken, "http://example.com"+statusPath, twice))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := storetest.SQLite(t)
			srv, logs := webhookServer(t, st, twilio.DefaultAuthToken)
			key := settleSMS(t, st, "SM_target")

			resp := postCallback(t, srv, twilio.DefaultAuthToken, form, forge)
			require.Equal(t, http.StatusForbidden, resp.Code)
			var body refusalBody
			require.NoError(t, json.Unmarshal(resp.Body.Bytes(), &body))
			require.Equal(t, mt.CodeUnauthorized, body.Observation.Code)
			require.Equal(t, "queued", receiptStatus(t, st, key), "a forged callback moved the receipt")
			require.Contains(t, logs.String(), "refused a Twilio status callback")
		})
	}

	t.Run("no auth token configured", func(t *testing.T) {
		t.Parallel()
		st := storetest.SQLite(t)
		srv, _ := webhookServer(t, st, "")
		key := settleSMS(t, st, "SM_target")
		resp := postCallback(t, srv, twilio.DefaultAuthToken, form, nil)
		require.Equal(t, http.StatusForbidden, resp.Code, "nothing can be verified, so nothing is believed")
		require.Equal(t, "queued", receiptStatus(t, st, key))
	})
}

// webhookServer builds the API over st alone: the callback route needs no
// Temporal, gate or reconciler. It returns the server and its log.
func webhookServer(t *testing.T, st store.Store, token string) (*Server, *syncBuffer) {
	t.Helper()
	cat, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	logs := &syncBuffer{}
	s := &Server{cfg: Config{
		Store:           st,
		Catalog:         cat,
		TwilioAuthToken: token,
		Logger:          slog.New(slog.NewTextHandler(logs, nil)),
	}.WithDefaults(), mux: http.NewServeMux()}
	s.routes()
	return s, logs
}

func statusForm(sid, status string) url.Values {
	return url.Values{
		"AccountSid":    {twilio.DefaultAccountSID},
		"MessageSid":    {sid},
		"MessageStatus": {status},
		"SmsSid":        {sid},
		"SmsStatus":     {status},
	}
}

// postCallback sends form to srv signed with token, after forge (if any)
// has tampered with the request.
func postCallback(t *testing.T, srv http.Handler, token string, form url.Values, forge func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	target := "http://example.com" + statusPath
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", twilio.Signature(token, target, form))
	if forge != nil {
		forge(req)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// settleSMS records a succeeded send whose receipt is the message sid,
// status queued, as the Twilio connector would.
func settleSMS(t *testing.T, st store.Store, sid string) string {
	t.Helper()
	key := "call-1:" + sid
	_, err := st.EffectClaim(t.Context(), store.EffectClaimParams{
		OperationKey: key, InvocationID: "inv_" + sid, Tool: "send_sms", PayloadHash: strings.Repeat("0", 64),
		Owner: "worker-a", LeaseTTL: time.Minute,
	})
	require.NoError(t, err)
	require.NoError(t, st.EffectSettle(t.Context(), store.EffectSettleParams{
		OperationKey: key, Owner: "worker-a", Status: mt.EffectSucceeded,
		Receipt: &mt.Receipt{Provider: "twilio", ID: sid, Status: "queued", Fields: map[string]string{"message_sid": sid}},
	}))
	return key
}

func receiptStatus(t *testing.T, st store.Store, key string) string {
	t.Helper()
	eff, err := st.EffectGet(t.Context(), key)
	require.NoError(t, err)
	return eff.Receipt.Status
}

// sendWithCallback sends a message through the stand-in's Messages API and
// returns its SID.
func sendWithCallback(t *testing.T, base, callback string) string {
	t.Helper()
	form := url.Values{"To": {"+14155550100"}, "From": {"+15005550006"}, "Body": {"hi"}, "StatusCallback": {callback}}
	req, err := http.NewRequest(http.MethodPost, base+"/2010-04-01/Accounts/"+twilio.DefaultAccountSID+"/Messages.json", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(twilio.DefaultAccountSID, twilio.DefaultAuthToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var msg struct {
		SID string `json:"sid"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	return msg.SID
}

// syncBuffer is a log sink safe for the server's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
