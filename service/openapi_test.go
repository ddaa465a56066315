package service_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/api"
)

// The OpenAPI document, loaded once for every validating client.
var (
	openAPIOnce   sync.Once
	openAPIRouter routers.Router
	openAPIErr    error
)

func openAPIDocument() (routers.Router, error) {
	openAPIOnce.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(api.OpenAPI)
		if err != nil {
			openAPIErr = fmt.Errorf("error loading api/openapi.yaml: %w", err)
			return
		}
		if err := doc.Validate(loader.Context); err != nil {
			openAPIErr = fmt.Errorf("api/openapi.yaml is not a valid OpenAPI document: %w", err)
			return
		}
		// Match any host: the tests serve on ephemeral ports.
		doc.Servers = nil
		openAPIRouter, openAPIErr = gorillamux.NewRouter(doc)
	})
	return openAPIRouter, openAPIErr
}

// openAPIClient is an HTTP client that checks every exchange with the
// server against api/openapi.yaml: a request the server accepts must be
// one the document allows, and every response (status and body) must be
// one the document describes. A request the document forbids may still be
// sent, to test refusals, as long as the server refuses it too.
func openAPIClient(t *testing.T) *http.Client {
	t.Helper()
	router, err := openAPIDocument()
	require.NoError(t, err)
	return &http.Client{Timeout: 60 * time.Second, Transport: &openAPIValidator{t: t, router: router, next: http.DefaultTransport}}
}

type openAPIValidator struct {
	t      *testing.T
	router routers.Router
	next   http.RoundTripper
}

func (v *openAPIValidator) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		var err error
		if reqBody, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := v.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if err != nil {
		return resp, nil // the caller sees the short body and reports it
	}

	where := req.Method + " " + req.URL.Path
	check := req.Clone(context.Background())
	check.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := v.router.FindRoute(check)
	if err != nil {
		v.t.Errorf("openapi: %s is not in api/openapi.yaml: %v", where, err)
		return resp, nil
	}
	in := &openapi3filter.RequestValidationInput{
		Request: check, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && resp.StatusCode < 400 {
		v.t.Errorf("openapi: the server accepted (%d) a request api/openapi.yaml forbids: %s %s\n%v", resp.StatusCode, where, reqBody, err)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(respBody)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.t.Errorf("openapi: %s answered %d with a response api/openapi.yaml does not describe: %s\n%v", where, resp.StatusCode, respBody, err)
	}
	return resp, nil
}
