package connectors

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// maxResponseBytes bounds what we read from a provider; an observation
// carries far less.
const maxResponseBytes = 1 << 20

// HTTPService is one downstream HTTP API reachable by name from the catalog.
type HTTPService struct {
	// BaseURL is the service root, e.g. "https://backoffice.example.com".
	BaseURL string
	// Token is sent as a bearer token. Optional.
	Token string
}

// HTTPConfig configures the generic HTTP connector.
type HTTPConfig struct {
	Services map[string]HTTPService
	// Timeout bounds each request. Optional: default 10s.
	Timeout time.Duration
}

// HTTP calls JSON APIs and passes the idempotency key as an
// Idempotency-Key header, so the provider itself deduplicates retries.
type HTTP struct {
	services map[string]HTTPService
	client   *http.Client
}

// NewHTTP builds the connector.
func NewHTTP(cfg HTTPConfig) *HTTP {
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &HTTP{services: cfg.Services, client: &http.Client{Timeout: cfg.Timeout}}
}

// Do performs one request. Settings: service, method, path, and optionally
// id_field / status_field naming the receipt fields in the response.
//
// A GET finds nothing (Result.Empty) when the service answers 404, or 2xx
// with null, an empty array, an empty object, or a list envelope whose
// "data" array is empty ({"object":"list","data":[]}, as Stripe-style APIs
// list).
func (h *HTTP) Do(ctx context.Context, call Call) (Result, error) {
	req, provider, err := h.build(ctx, call)
	if err != nil {
		return Result{}, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return Result{}, classifyTransport(provider, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		// The provider answered but we lost the body: for a write that is
		// an unknown outcome, never a failure.
		return Result{}, &Error{Class: ClassUnknown, Provider: provider, HTTPStatus: resp.StatusCode, Message: "response lost: " + err.Error(), Err: err}
	}
	if resp.StatusCode == http.StatusConflict && errorType(body) == "idempotency_error" {
		// Another request with our key is still running at the provider:
		// the effect may be under way, so this is neither a refusal nor a
		// reason to send again.
		return Result{}, &Error{Class: ClassUnknown, Provider: provider, HTTPStatus: resp.StatusCode, ProviderCode: errorType(body), Message: errorMessage(body)}
	}
	if req.Method == http.MethodGet && resp.StatusCode == http.StatusNotFound {
		// A lookup of something the service does not hold: an answer,
		// not a failure, and the agent needs a next step rather than an
		// error to retry.
		res := Result{Empty: true}
		if json.Valid(body) {
			res.Payload = body
		}
		return res, nil
	}
	if resp.StatusCode >= 300 {
		return Result{}, &Error{Class: classifyStatus(resp.StatusCode), Provider: provider, HTTPStatus: resp.StatusCode, ProviderCode: errorType(body), Message: errorMessage(body)}
	}
	if !json.Valid(body) {
		return Result{}, &Error{Class: ClassUnknown, Provider: provider, HTTPStatus: resp.StatusCode, Message: "response is not JSON"}
	}
	res := Result{Payload: body}
	if req.Method == http.MethodGet {
		res.Empty = emptyJSON(body)
	} else {
		receipt, err := httpReceipt(provider, call, body)
		if err != nil {
			return Result{}, err
		}
		res.Receipt = receipt
	}
	return res, nil
}

func (h *HTTP) build(ctx context.Context, call Call) (*http.Request, string, error) {
	name, err := call.Setting("service")
	if err != nil {
		return nil, "", err
	}
	svc, ok := h.services[name]
	if !ok {
		return nil, "", &Error{Class: ClassInvalid, Provider: "http:" + name, Message: fmt.Sprintf("HTTP service %q is not configured", name)}
	}
	provider := "http:" + name
	method, err := call.Setting("method")
	if err != nil {
		return nil, "", err
	}
	path, err := call.Setting("path")
	if err != nil {
		return nil, "", err
	}
	var body io.Reader
	if method != http.MethodGet && len(call.Body) > 0 {
		body = bytes.NewReader(call.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(svc.BaseURL, "/")+path, body)
	if err != nil {
		return nil, "", &Error{Class: ClassInvalid, Provider: provider, Message: "bad request: " + err.Error(), Err: err}
	}
	// net/http transparently resends a request that carries an
	// Idempotency-Key when a kept-alive connection turns out dead. That
	// resend is invisible to the ledger; without GetBody it cannot happen.
	req.GetBody = nil
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if svc.Token != "" {
		req.Header.Set("Authorization", "Bearer "+svc.Token)
	}
	if call.IdempotencyKey != "" && method != http.MethodGet {
		req.Header.Set("Idempotency-Key", call.IdempotencyKey)
	}
	return req, provider, nil
}

func httpReceipt(provider string, call Call, body []byte) (*maestrotype.Receipt, error) {
	idField, statusField := call.Settings["id_field"], call.Settings["status_field"]
	if idField == "" {
		idField = "id"
	}
	if statusField == "" {
		statusField = "status"
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, &Error{Class: ClassUnknown, Provider: provider, Message: "response is not a JSON object"}
	}
	id, _ := obj[idField].(string)
	if id == "" {
		return nil, &Error{Class: ClassUnknown, Provider: provider, Message: fmt.Sprintf("response has no %q field to prove the effect", idField)}
	}
	status, _ := obj[statusField].(string)
	if HTTPStatusMeaning(status) == StatusFailed {
		return nil, failedStatus(provider, id, status, "", failureDetail(obj))
	}
	return &maestrotype.Receipt{
		Provider: provider,
		ID:       id,
		Status:   status,
		Fields:   map[string]string{maestrotype.ReceiptResourceID: id, maestrotype.ReceiptStatus: status},
		IssuedAt: time.Now().UTC(),
	}, nil
}

// failureDetail is a failed resource's own explanation, from the fields
// Stripe-style APIs use for it.
func failureDetail(obj map[string]any) string {
	for _, field := range []string{"failure_reason", "failure_message", "error"} {
		if v, ok := obj[field].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// errorType and errorMessage read a Stripe-style {"error":{…}} body.
func errorType(body []byte) string {
	var e struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Type
}

func errorMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Param   string `json:"param"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" {
		s := strings.TrimSpace(string(body))
		if len(s) > 200 {
			s = s[:200]
		}
		return s
	}
	if e.Error.Param != "" {
		return e.Error.Message + " (param: " + e.Error.Param + ")"
	}
	return e.Error.Message
}

// emptyJSON reports whether a read's 2xx body holds nothing: null, [], {},
// or a list envelope with an empty "data" array.
func emptyJSON(body []byte) bool {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return false
	}
	switch t := v.(type) {
	case nil:
		return true
	case []any:
		return len(t) == 0
	case map[string]any:
		if len(t) == 0 {
			return true
		}
		data, ok := t["data"].([]any)
		return ok && len(data) == 0
	}
	return false
}
