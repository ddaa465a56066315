// Package inprocess serves HTTP requests with a handler in this process:
// a typed client then reaches the very handlers network clients reach,
// with no socket in between.
package inprocess

import (
	"bytes"
	"io"
	"net/http"
)

// Transport is an http.RoundTripper that hands each request to Handler.
type Transport struct {
	Handler http.Handler
	// Prepare may change each request before it is served, such as
	// setting who the caller is in its context. Optional.
	Prepare func(*http.Request) *http.Request
}

// RoundTrip implements http.RoundTripper.
func (t Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	req := r.Clone(r.Context())
	if req.Body == nil {
		req.Body = http.NoBody
	}
	if t.Prepare != nil {
		req = t.Prepare(req)
	}
	req.RequestURI = req.URL.RequestURI()
	rec := &recorder{header: http.Header{}}
	t.Handler.ServeHTTP(rec, req)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	return &http.Response{
		Status:        http.StatusText(rec.code),
		StatusCode:    rec.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()),
		Request:       r,
	}, nil
}

// recorder keeps what a handler wrote.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
