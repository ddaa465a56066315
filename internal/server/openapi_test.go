package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/api"
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
	// Longer than the longest answer budget a platform test gives
	// (roomyBudget), as the platform itself waits that long.
	return &http.Client{Timeout: 2 * time.Minute, Transport: &openAPIValidator{errorf: t.Errorf, router: router, next: http.DefaultTransport}}
}

type openAPIValidator struct {
	// errorf reports drift; the test goes on, so one run shows it all.
	errorf func(format string, args ...any)
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
		v.errorf("openapi: %s is not in api/openapi.yaml: %v", where, err)
		return resp, nil
	}
	in := &openapi3filter.RequestValidationInput{
		Request: check, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && resp.StatusCode < 400 {
		v.errorf("openapi: the server accepted (%d) a request api/openapi.yaml forbids: %s %s\n%v", resp.StatusCode, where, reqBody, err)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(respBody)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	// A JSON body the document gives no schema for could drift unseen.
	if documented := route.Operation.Responses.Status(resp.StatusCode); documented != nil && documented.Value != nil &&
		strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && documented.Value.Content.Get("application/json") == nil {
		v.errorf("openapi: %s answered %d with a JSON body api/openapi.yaml has no schema for: %s", where, resp.StatusCode, respBody)
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.errorf("openapi: %s answered %d with a response api/openapi.yaml does not describe: %s\n%v", where, resp.StatusCode, respBody, err)
	}
	return resp, nil
}

// TestOpenAPIValidatorCatchesDrift shows the validating client failing on
// each kind of drift it exists to catch.
func TestOpenAPIValidatorCatchesDrift(t *testing.T) {
	t.Parallel()
	router, err := openAPIDocument()
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status": 5}`)) // status is a string in the document
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot) // not a documented status
	})
	mux.HandleFunc("POST /v1/invocations", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"observation":{"status":"success","summary":"ok"}}`)) // accepts anything
	})
	mux.HandleFunc("GET /v1/undocumented", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	for name, tc := range map[string]struct {
		method, path, body, want string
	}{
		"response body":      {http.MethodGet, "/healthz", "", "does not describe"},
		"response status":    {http.MethodGet, "/readyz", "", "does not describe"},
		"request body":       {http.MethodPost, "/v1/invocations", `{"tool":"x","unknown_field":1}`, "accepted (200) a request api/openapi.yaml forbids"},
		"undocumented route": {http.MethodGet, "/v1/undocumented", "", "is not in api/openapi.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var got []string
			var mu sync.Mutex
			client := &http.Client{Transport: &openAPIValidator{router: router, next: http.DefaultTransport, errorf: func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, fmt.Sprintf(format, args...))
			}}}
			req, err := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := client.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, got)
			require.Contains(t, strings.Join(got, "\n"), tc.want)
		})
	}
}
