package server_test

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// operator is a browser-less visitor of the console: an HTTP client with
// its own cookies.
type operator struct {
	t    *testing.T
	base string
	c    *http.Client
}

func (e *env) visitor() *operator {
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	return &operator{t: e.t, base: e.url, c: &http.Client{Jar: jar}}
}

// signIn signs in with key through the sign-in form and lands on the
// approval queue.
func (e *env) signIn(key string) *operator {
	o := e.visitor()
	status, body := o.get("/console/signin")
	require.Equal(e.t, http.StatusOK, status)
	status, body = o.post("/console/signin", url.Values{"key": {key}, "csrf": {csrfIn(body)}})
	require.Equal(e.t, http.StatusOK, status, body)
	require.Contains(e.t, body, "Approval queue")
	return o
}

func (o *operator) get(path string) (int, string) {
	o.t.Helper()
	resp, err := o.c.Get(o.base + path)
	require.NoError(o.t, err)
	return read(o.t, resp)
}

func (o *operator) post(path string, form url.Values) (int, string) {
	o.t.Helper()
	resp, err := o.c.PostForm(o.base+path, form)
	require.NoError(o.t, err)
	return read(o.t, resp)
}

// postForm posts form with the session's CSRF token, read from page, as
// a browser submits the page's form for path: with that form's hidden
// fields, unless form sets them itself.
func (o *operator) postForm(page, path string, form url.Values) (int, string) {
	o.t.Helper()
	_, body := o.get(page)
	form.Set("csrf", csrfIn(body))
	for name, value := range hiddenFields(body, path) {
		if !form.Has(name) {
			form.Set(name, value)
		}
	}
	return o.post(path, form)
}

var (
	formBlock   = regexp.MustCompile(`(?s)<form[^>]*\saction="([^"]*)"[^>]*>(.*?)</form>`)
	hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// hiddenFields are the hidden inputs of page's form that posts to path.
func hiddenFields(page, path string) map[string]string {
	out := map[string]string{}
	for _, f := range formBlock.FindAllStringSubmatch(page, -1) {
		if html.UnescapeString(f[1]) != path {
			continue
		}
		for _, in := range hiddenInput.FindAllStringSubmatch(f[2], -1) {
			out[html.UnescapeString(in[1])] = html.UnescapeString(in[2])
		}
	}
	return out
}

// boundTo is what a console form's body repeats of its address: the
// object's ID and the action.
func boundTo(id, action string) url.Values {
	return url.Values{"target_id": {id}, "target_action": {action}}
}

func read(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfIn(page string) string {
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1]
}

// textOf strips tags, so assertions read what a person reads.
func textOf(page string) string {
	return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page, " "))), " ")
}
