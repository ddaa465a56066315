package api

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/standin/twilio"
	"github.com/maestro-run/maestro/internal/syncbuf"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

const statusPath = "/v1/webhooks/twilio/status"

// The stand-in signs its callbacks as Twilio does; maestro verifies them
// with twilio-go's validator and keeps what the carrier reported last. The
// stand-in posts its callbacks while it is still answering the send, so
// they reach maestro before any ledger record names the message: they are
// kept by SID and joined to the send once it settles.
func TestTwilioStatusCallbackFromTheStandInIsKeptBeforeTheSendSettles(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	srv, _ := webhookServer(t, st, twilio.DefaultAuthToken)
	maestro := httptest.NewServer(srv)
	t.Cleanup(maestro.Close)

	tw, err := twilio.New(twilio.Options{})
	require.NoError(t, err)
	provider := httptest.NewServer(tw)
	t.Cleanup(provider.Close)

	sid := sendWithCallback(t, provider.URL, maestro.URL+statusPath)
	require.Eventually(t, func() bool {
		ms, err := st.MessageStatusGet(t.Context(), "twilio", sid)
		return err == nil && ms.Status == mt.MessageDelivered
	}, 5*time.Second, 20*time.Millisecond, "the delivered callback was never kept")
	effs, err := st.EffectListByReceiptID(t.Context(), sid)
	require.NoError(t, err)
	require.Empty(t, effs, "no ledger record names the message yet")

	key := settleSMS(t, st, sid)
	eff, err := st.EffectGet(t.Context(), key)
	require.NoError(t, err)
	ms, err := st.MessageStatusGet(t.Context(), "twilio", eff.Receipt.Fields["message_sid"])
	require.NoError(t, err)
	require.Equal(t, mt.MessageDelivered, ms.Status, "the early callback is found from the settled receipt")
}

func TestSignedTwilioStatusCallback(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	srv, _ := webhookServer(t, st, twilio.DefaultAuthToken)
	settleSMS(t, st, "SM_signed")

	resp := postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_signed", "delivered"), nil)
	require.Equal(t, http.StatusOK, resp.Code)
	require.Equal(t, apitype.StatusCallbackAck{MessageID: "SM_signed", Status: mt.MessageDelivered, Outcome: "recorded"}, ackOf(t, resp))
	require.Equal(t, mt.MessageDelivered, messageStatus(t, st, "SM_signed"))

	// A message no receipt carries is kept and acknowledged, so Twilio does
	// not retry it: its send may not have settled yet.
	resp = postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_elsewhere", "delivered"), nil)
	require.Equal(t, http.StatusOK, resp.Code)

	for _, status := range []string{"teleported", "received", ""} {
		resp = postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_signed", status), nil)
		require.Equal(t, http.StatusBadRequest, resp.Code, "status %q is not one an outbound message has", status)
	}
	resp = postCallback(t, srv, twilio.DefaultAuthToken, statusForm("", "sent"), nil)
	require.Equal(t, http.StatusBadRequest, resp.Code, "no MessageSid")
	require.Equal(t, mt.MessageDelivered, messageStatus(t, st, "SM_signed"))
}

// An identical callback again, or any callback carrying an idempotency
// token seen before, is answered 200 and changes nothing.
func TestReplayedTwilioStatusCallbackChangesNothing(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	srv, _ := webhookServer(t, st, twilio.DefaultAuthToken)
	settleSMS(t, st, "SM_replayed")

	withToken := func(token string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("I-Twilio-Idempotency-Token", token) }
	}
	resp := postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_replayed", "sent"), withToken("tok-sent"))
	require.Equal(t, "recorded", ackOf(t, resp).Outcome)
	before, err := st.MessageStatusGet(t.Context(), "twilio", "SM_replayed")
	require.NoError(t, err)

	resp = postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_replayed", "sent"), withToken("tok-sent"))
	require.Equal(t, http.StatusOK, resp.Code)
	require.Equal(t, apitype.StatusCallbackAck{MessageID: "SM_replayed", Status: mt.MessageSent, Outcome: "replayed"}, ackOf(t, resp))

	// The token of a callback already taken, on another status, is a
	// replay too: Twilio gives every request its own.
	resp = postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_replayed", "failed"), withToken("tok-sent"))
	require.Equal(t, http.StatusOK, resp.Code)
	require.Equal(t, "replayed", ackOf(t, resp).Outcome)

	after, err := st.MessageStatusGet(t.Context(), "twilio", "SM_replayed")
	require.NoError(t, err)
	require.Equal(t, before, after, "a replay moved the status")
}

// Callbacks arrive out of order; a status never moves backwards.
func TestOutOfOrderTwilioStatusCallbackKeepsTheLaterStatus(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	srv, _ := webhookServer(t, st, twilio.DefaultAuthToken)
	settleSMS(t, st, "SM_ooo")

	require.Equal(t, "recorded", ackOf(t, postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_ooo", "delivered"), nil)).Outcome)
	resp := postCallback(t, srv, twilio.DefaultAuthToken, statusForm("SM_ooo", "sent"), nil)
	require.Equal(t, http.StatusOK, resp.Code)
	require.Equal(t, apitype.StatusCallbackAck{MessageID: "SM_ooo", Status: mt.MessageDelivered, Outcome: "stale"}, ackOf(t, resp))
	require.Equal(t, mt.MessageDelivered, messageStatus(t, st, "SM_ooo"))
}

// With a public URL configured, the signature is checked over it, the URL
// Twilio was given, whatever Host the request arrived with (a proxy in
// front may rewrite it).
func TestTwilioStatusCallbackIsVerifiedOverThePublicURL(t *testing.T) {
	t.Parallel()
	st := ledgertest.SQLite(t)
	srv, logs := webhookServerWith(t, st, func(c *Config) {
		c.TwilioAuthToken = twilio.DefaultAuthToken
		c.PublicURL = "https://maestro.example.com/"
	})
	form := statusForm("SM_public", "sent")

	resp := postCallback(t, srv, twilio.DefaultAuthToken, form, nil)
	require.Equal(t, http.StatusForbidden, resp.Code, "signed over the URL the request reached, not the one Twilio was given")
	require.Contains(t, logs.String(), "https://maestro.example.com"+statusPath)

	resp = postCallback(t, srv, twilio.DefaultAuthToken, form, func(r *http.Request) {
		r.Header.Set("X-Twilio-Signature", twilio.Signature(twilio.DefaultAuthToken, "https://maestro.example.com"+statusPath, form))
	})
	require.Equal(t, http.StatusOK, resp.Code)
	require.Equal(t, mt.MessageSent, messageStatus(t, st, "SM_public"))
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
			st := ledgertest.SQLite(t)
			srv, logs := webhookServer(t, st, twilio.DefaultAuthToken)
			settleSMS(t, st, "SM_target")

			resp := postCallback(t, srv, twilio.DefaultAuthToken, form, forge)
			require.Equal(t, http.StatusForbidden, resp.Code)
			var body refusalBody
			require.NoError(t, json.Unmarshal(resp.Body.Bytes(), &body))
			require.Equal(t, mt.CodeUnauthorized, body.Observation.Code)
			_, err := st.MessageStatusGet(t.Context(), "twilio", "SM_target")
			require.ErrorIs(t, err, ledger.ErrNotFound, "a forged callback was recorded")
			require.Contains(t, logs.String(), "refused a Twilio status callback")
		})
	}

	t.Run("no auth token configured", func(t *testing.T) {
		t.Parallel()
		st := ledgertest.SQLite(t)
		srv, _ := webhookServer(t, st, "")
		settleSMS(t, st, "SM_target")
		resp := postCallback(t, srv, twilio.DefaultAuthToken, form, nil)
		require.Equal(t, http.StatusForbidden, resp.Code, "nothing can be verified, so nothing is believed")
		_, err := st.MessageStatusGet(t.Context(), "twilio", "SM_target")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}

// webhookServer builds the API over st alone: the callback route needs no
// Temporal, gate or reconciler. It returns the server and its log.
func webhookServer(t *testing.T, st ledger.Store, token string) (*Server, *syncbuf.Buffer) {
	t.Helper()
	return webhookServerWith(t, st, func(c *Config) { c.TwilioAuthToken = token })
}

// webhookServerWith is webhookServer with the configuration edited by
// configure.
func webhookServerWith(t *testing.T, st ledger.Store, configure func(*Config)) (*Server, *syncbuf.Buffer) {
	t.Helper()
	cat, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	logs := &syncbuf.Buffer{}
	cfg := Config{Store: st, Catalog: cat, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	configure(&cfg)
	s := &Server{cfg: cfg.WithDefaults(), mux: http.NewServeMux()}
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
func settleSMS(t *testing.T, st ledger.Store, sid string) string {
	t.Helper()
	key := "call-1:" + sid
	_, err := st.EffectClaim(t.Context(), ledger.EffectClaimParams{
		OperationKey: key, InvocationID: "inv_" + sid, Tool: "send_sms", PayloadHash: strings.Repeat("0", 64),
		Owner: "worker-a", LeaseTTL: time.Minute,
	})
	require.NoError(t, err)
	require.NoError(t, st.EffectSettle(t.Context(), ledger.EffectSettleParams{
		OperationKey: key, Owner: "worker-a", Status: mt.EffectSucceeded,
		Receipt: &mt.Receipt{Provider: "twilio", ID: sid, Status: "queued", Fields: map[string]string{"message_sid": sid}},
	}))
	return key
}

func messageStatus(t *testing.T, st ledger.Store, sid string) mt.MessageStatus {
	t.Helper()
	ms, err := st.MessageStatusGet(t.Context(), "twilio", sid)
	require.NoError(t, err)
	return ms.Status
}

func ackOf(t *testing.T, resp *httptest.ResponseRecorder) apitype.StatusCallbackAck {
	t.Helper()
	require.Equal(t, http.StatusOK, resp.Code, resp.Body.String())
	var ack apitype.StatusCallbackAck
	require.NoError(t, json.Unmarshal(resp.Body.Bytes(), &ack))
	return ack
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
