package transcriptref_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/transcriptref"
)

func requireRule(t *testing.T, err error, rule transcriptref.Rule) {
	t.Helper()
	var ref *transcriptref.RefusedError
	require.ErrorAs(t, err, &ref)
	require.Equal(t, rule, ref.Rule, ref.Detail)
}

func TestCheck(t *testing.T) {
	t.Parallel()
	p := transcriptref.Policy{Hosts: []string{"transcripts.example.com", "Calls.Example.com:8443", "[::1]:9000"}}
	for _, tt := range []struct {
		url  string
		rule transcriptref.Rule // "" when allowed
	}{
		{"https://transcripts.example.com/calls/1.json", ""},
		{"https://transcripts.example.com:443/calls/1.json", ""},
		{"https://calls.example.com:8443/1", ""},
		{"https://[::1]:9000/1", ""},
		{"https://transcripts.example.com:8443/1", transcriptref.RuleHost},
		{"https://calls.example.com/1", transcriptref.RuleHost},
		{"https://169.254.169.254/latest/meta-data/", transcriptref.RuleHost},
		{"https://transcripts.example.com.evil.test/1", transcriptref.RuleHost},
		{"http://transcripts.example.com/1", transcriptref.RuleHTTPSOnly},
		{"file:///etc/passwd", transcriptref.RuleMalformed},
		{"gopher://transcripts.example.com/1", transcriptref.RuleHTTPSOnly},
		{"https://user:pw@transcripts.example.com/1", transcriptref.RuleNoUserinfo},
		{"/calls/1.json", transcriptref.RuleMalformed},
		{"::not a url", transcriptref.RuleMalformed},
	} {
		err := p.Check(tt.url)
		if tt.rule == "" {
			require.NoError(t, err, tt.url)
			continue
		}
		requireRule(t, err, tt.rule)
	}

	requireRule(t, transcriptref.Policy{}.Check("https://transcripts.example.com/1"), transcriptref.RuleDisabled)
	require.NoError(t, transcriptref.Policy{Hosts: []string{"localhost:8080"}, AllowHTTP: true}.Check("http://localhost:8080/1"))
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, transcriptref.Policy{Hosts: transcriptref.ParseHosts(" a.example.com, b.example.com:8443 ,")}.Validate())
	for _, bad := range []string{"https://a.example.com", "a.example.com/path", "a.example.com:0", "a.example.com:http", "::1"} {
		require.Error(t, transcriptref.Policy{Hosts: []string{bad}}.Validate(), bad)
	}
	require.Error(t, transcriptref.Policy{MaxBytes: 4 << 20}.Validate(), "a cap above Temporal's payload limit")
}

func TestFetch(t *testing.T) {
	t.Parallel()
	const transcript = `{"turns":[{"speaker":"caller","text":"The tap is leaking.","at":"2026-12-01T10:00:00Z"}]}`
	offList := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(transcript))
	}))
	t.Cleanup(offList.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(transcript))
		case "/hop":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/away":
			http.Redirect(w, r, offList.URL+"/ok", http.StatusFound)
		case "/big":
			_, _ = w.Write([]byte(`{"turns":[{"speaker":"caller","text":"` + strings.Repeat("x", 2048) + `"}]}`))
		case "/bigchunked":
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte(`{"turns":[{"speaker":"caller","text":"` + strings.Repeat("x", 2048) + `"}]}`))
		case "/html":
			_, _ = w.Write([]byte(`<html>`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	p := transcriptref.Policy{Hosts: []string{strings.TrimPrefix(srv.URL, "http://")}, AllowHTTP: true, MaxBytes: 1024}

	got, err := p.Fetch(t.Context(), srv.URL+"/ok")
	require.NoError(t, err)
	require.Equal(t, "The tap is leaking.", got.Turns[0].Text)
	got, err = p.Fetch(t.Context(), srv.URL+"/hop")
	require.NoError(t, err, "a redirect within the allowlist is followed")
	require.Len(t, got.Turns, 1)

	_, err = p.Fetch(t.Context(), srv.URL+"/away")
	requireRule(t, err, transcriptref.RuleRedirect)
	_, err = p.Fetch(t.Context(), srv.URL+"/big")
	requireRule(t, err, transcriptref.RuleSize)
	_, err = p.Fetch(t.Context(), srv.URL+"/bigchunked")
	requireRule(t, err, transcriptref.RuleSize)
	_, err = p.Fetch(t.Context(), srv.URL+"/html")
	requireRule(t, err, transcriptref.RuleFormat)
	_, err = p.Fetch(t.Context(), offList.URL+"/ok")
	requireRule(t, err, transcriptref.RuleHost)

	_, err = p.Fetch(t.Context(), srv.URL+"/missing")
	require.Error(t, err)
	var ref *transcriptref.RefusedError
	require.NotErrorAs(t, err, &ref, "a 404 may be transient: the transcript may not be uploaded yet")
}
