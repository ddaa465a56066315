package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/transcriptref"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// leakTranscript is a transcript one of whose turns the catalog's rules
// turn into a work order; the other turn is no work, and distinctive
// enough to search history for.
const leakTranscript = `{"turns":[` +
	`{"speaker":"agent","text":"Your account passphrase is zebra-4412.","at":"2026-12-01T09:59:00Z"},` +
	`{"speaker":"caller","text":"The bathroom tap is leaking.","at":"2026-12-01T10:00:00Z"}]}`

// transcriptServer serves leakTranscript at /calls/1.json, redirects
// /moved off to elsewhere, and serves an oversized transcript at /big.
func transcriptServer(t *testing.T, elsewhere string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/calls/1.json":
			_, _ = w.Write([]byte(leakTranscript))
		case "/moved":
			http.Redirect(w, r, elsewhere+"/calls/1.json", http.StatusFound)
		case "/big":
			_, _ = w.Write([]byte(`{"turns":[{"speaker":"caller","text":"` + strings.Repeat("leak ", 1<<20) + `"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// requireNotInHistory fails if an event of the session's workflows
// carries s.
func (e *env) requireNotInHistory(s string) {
	e.t.Helper()
	for _, id := range []string{workflows.SessionWorkflowID(e.session), workflows.PostCallWorkflowID(e.session)} {
		iter := e.temporal.GetWorkflowHistory(e.ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			ev, err := iter.Next()
			require.NoError(e.t, err)
			require.NotContains(e.t, ev.String(), s, "event %d of %s carries the transcript", ev.GetEventId(), id)
		}
	}
}

func allowing(srv *httptest.Server) func(*options) {
	return func(o *options) {
		o.transcripts = transcriptref.Policy{Hosts: []string{strings.TrimPrefix(srv.URL, "http://")}, AllowHTTP: true}
	}
}

func TestCallEndedFetchesATranscriptFromAnAllowedHost(t *testing.T) {
	t.Parallel()
	srv := transcriptServer(t, "")
	e := setup(t, allowing(srv))
	_, err := e.invoke("lookup_tenant", e.key("lookup"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)

	_, err = e.agent.End(e.ctx, e.session, apitype.EndRequest{TranscriptRef: srv.URL + "/calls/1.json"})
	require.NoError(t, err)
	e.waitPostCall()

	sess, err := e.agent.Session(e.ctx, e.session)
	require.NoError(t, err)
	require.Len(t, sess.PostCall, 1)
	require.Equal(t, "delivered", sess.PostCall[0].Status)
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders(), "the fetched transcript's leak became a work order")

	// The fetched transcript never passes through workflow history: only
	// the reference and the work item the judge made of one turn do.
	e.requireNotInHistory("zebra-4412")
}

func TestTranscriptRefOutsideThePolicyIsRefusedAtEnd(t *testing.T) {
	t.Parallel()
	srv := transcriptServer(t, "")
	allowed := strings.TrimPrefix(srv.URL, "http://")
	https := setup(t, func(o *options) { o.transcripts = transcriptref.Policy{Hosts: []string{allowed}} })
	none := setup(t)

	for _, tt := range []struct {
		name string
		e    *env
		ref  string
		rule transcriptref.Rule
	}{
		{"InternalAddress", https, "https://169.254.169.254/latest/meta-data/", transcriptref.RuleHost},
		{"OtherPortOfAnAllowedHost", https, "https://" + strings.Split(allowed, ":")[0] + ":1/x", transcriptref.RuleHost},
		{"PlainHTTPOutsideDevMode", https, srv.URL + "/calls/1.json", transcriptref.RuleHTTPSOnly},
		{"NotAURL", https, "calls/1.json", transcriptref.RuleMalformed},
		{"NoAllowlistConfigured", none, srv.URL + "/calls/1.json", transcriptref.RuleDisabled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.e
			session := e.session + "-" + strings.ToLower(tt.name)
			req := invokeRequest(session, "lookup_tenant", session+":lookup", `{"tenant_id":"t_100"}`)
			_, err := e.agent.Invoke(e.ctx, req)
			require.NoError(t, err)

			_, err = e.agent.End(e.ctx, session, apitype.EndRequest{TranscriptRef: tt.ref})
			obs := requireRefusal(t, err, http.StatusUnprocessableEntity, mt.CodeTranscriptRefused)
			require.Contains(t, obs.Summary, string(tt.rule), "the refusal names the rule")
			require.JSONEq(t, `{"rule":"`+string(tt.rule)+`"}`, string(obs.Payload))

			sess, err := e.agent.Session(e.ctx, session)
			require.NoError(t, err)
			require.Equal(t, mt.SessionActive, sess.State, "a refused end does not end the call")
			end, err := e.agent.End(e.ctx, session, apitype.EndRequest{})
			require.NoError(t, err, "the call can still be ended without the reference")
			require.True(t, end.Ended)
		})
	}
	refusals, err := https.store.RefusalList(https.ctx, 50)
	require.NoError(t, err)
	logged := 0
	for _, r := range refusals {
		if r.Code == mt.CodeTranscriptRefused {
			logged++
		}
	}
	require.Equal(t, 4, logged, "each refused transcript_ref is in the refusal log")
}

// TestWorkerRechecksTheTranscriptAtFetchTime covers what the API cannot
// see: a redirect off the allowlist, and a transcript over the size cap.
// The recorded intents are still delivered; the transcript's work is
// reported as not done, naming the rule.
func TestWorkerRechecksTheTranscriptAtFetchTime(t *testing.T) {
	t.Parallel()
	offList := transcriptServer(t, "")
	srv := transcriptServer(t, offList.URL)

	for _, tt := range []struct {
		name string
		path string
		rule transcriptref.Rule
	}{
		{"RedirectOffTheAllowlist", "/moved", transcriptref.RuleRedirect},
		{"OverTheSizeCap", "/big", transcriptref.RuleSize},
		// Not a rule: the server never serves it, through every retry.
		{"NeverServed", "/missing", "could not be fetched"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, allowing(srv))
			_, err := e.invoke("take_message", e.key("msg"), `{"message":"Please renew my parking permit.","callback_number":"+14155550100"}`)
			require.NoError(t, err)

			end, err := e.agent.End(e.ctx, e.session, apitype.EndRequest{TranscriptRef: srv.URL + tt.path})
			require.NoError(t, err, "the reference itself is on the allowlist")
			require.True(t, end.Ended)
			e.waitPostCall()

			sess, err := e.agent.Session(e.ctx, e.session)
			require.NoError(t, err)
			require.Equal(t, "delivered", sess.Deferred[0].Status, "the recorded message is still delivered")
			var transcript *apitype.PostCallItem
			for i, it := range sess.PostCall {
				if it.Key == "transcript" {
					transcript = &sess.PostCall[i]
				}
			}
			require.NotNil(t, transcript, "the unfetched transcript is reported: %+v", sess.PostCall)
			require.Equal(t, "failed", transcript.Status)
			require.Contains(t, transcript.Reason, string(tt.rule))
			require.Zero(t, e.standins.Sandbox.CountWorkOrders(), "nothing was made of a transcript maestro refused")
		})
	}
}
