package twilio

import (
	"net/http"
	"net/url"
)

// RewriteTransport is an http.RoundTripper that sends every request to
// Target, keeping its path and query. twilio-go always addresses
// api.twilio.com and has no base-URL option, so pointing it at a stand-in
// means rewriting at the transport.
type RewriteTransport struct {
	// Target is the stand-in's base URL (required); only its scheme and host
	// are used.
	Target *url.URL
	// Base sends the rewritten request. Optional: default http.DefaultTransport.
	Base http.RoundTripper
}

// RoundTrip sends a copy of req to Target.
func (t *RewriteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL.Scheme = t.Target.Scheme
	out.URL.Host = t.Target.Host
	out.Host = t.Target.Host
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(out)
}
