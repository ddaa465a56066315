package connectors

import (
	"fmt"
	"net/http"
	"net/url"
)

// rewriteTransport sends every request to base, keeping path and query.
// twilio-go has no base-URL option, so this is how it reaches a configured
// endpoint (a regional edge, a proxy or a local stand-in).
type rewriteTransport struct {
	base *url.URL
	next http.RoundTripper
}

func newRewriteTransport(baseURL string, next http.RoundTripper) (*rewriteTransport, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("error parsing endpoint %q: want scheme://host[:port]", baseURL)
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return &rewriteTransport{base: u, next: next}, nil
}

func (t *rewriteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL.Scheme = t.base.Scheme
	out.URL.Host = t.base.Host
	out.Host = t.base.Host
	return t.next.RoundTrip(out)
}
