package console

import (
	"bytes"
	"io"
	"net/http"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/api"
	"github.com/maestro-run/maestro/tools"
)

// apiFor is a typed API client that acts as op, served in process: the
// console never holds an operator's key after sign-in, and every action
// meets the same checks as a CLI call with that key.
func (c *Console) apiFor(op *tools.Operator) *apiclient.Client {
	return apiclient.New("http://console.invalid", "", apiclient.Options{
		HTTPClient: &http.Client{Transport: inProcess{api: c.cfg.API, op: op}},
	})
}

// inProcess hands each request to the API handler with the operator set.
type inProcess struct {
	api http.Handler
	op  *tools.Operator
}

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.WithContext(api.AsOperator(req.Context(), t.op))
	req.RequestURI = req.URL.RequestURI()
	rec := &recorder{header: http.Header{}}
	t.api.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		StatusCode:    rec.status,
		Status:        http.StatusText(rec.status),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(&rec.body),
		ContentLength: int64(rec.body.Len()),
		Request:       req,
	}, nil
}

// recorder is the ResponseWriter an in-process request writes to.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}
