// Package apiclient is the typed client of maestro's HTTP API. The CLI and
// the demo talk to maestro only through it.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// Client calls one maestro server with one key.
type Client struct {
	baseURL string
	key     string
	http    *http.Client
}

// Options configure a Client.
type Options struct {
	// HTTPClient. Optional: default a client with a 60s timeout.
	HTTPClient *http.Client
}

// New returns a client for the server at baseURL using key as its bearer
// token (an agent or operator key).
func New(baseURL, key string, opts Options) *Client {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), key: key, http: opts.HTTPClient}
}

// Error is a request maestro refused, with the observation explaining why.
type Error struct {
	StatusCode  int
	Observation mt.Observation
}

func (e *Error) Error() string {
	return fmt.Sprintf("maestro refused the request (HTTP %d, %s): %s", e.StatusCode, e.Observation.Code, e.Observation.Summary)
}

// Response is an invocation plus what the HTTP exchange said about it.
type Response struct {
	apitype.Invocation
	// Pending is set on 202: the invocation waits (for approval or a slow
	// provider); poll it after RetryAfter.
	Pending    bool
	RetryAfter time.Duration
}

// Invoke asks maestro to run a tool.
func (c *Client) Invoke(ctx context.Context, req apitype.InvokeRequest) (Response, error) {
	return c.invocation(ctx, http.MethodPost, "/v1/invocations", req)
}

// Invocation reads one invocation.
func (c *Client) Invocation(ctx context.Context, id string) (Response, error) {
	return c.invocation(ctx, http.MethodGet, "/v1/invocations/"+url.PathEscape(id), nil)
}

// Wait polls an invocation until it is final or ctx ends.
func (c *Client) Wait(ctx context.Context, id string) (Response, error) {
	for {
		resp, err := c.Invocation(ctx, id)
		if err != nil || !resp.Pending {
			return resp, err
		}
		t := time.NewTimer(resp.RetryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return resp, ctx.Err()
		case <-t.C:
		}
	}
}

// Tools lists the tools the caller may use.
func (c *Client) Tools(ctx context.Context) (apitype.ToolList, error) {
	var out apitype.ToolList
	_, _, err := c.do(ctx, http.MethodGet, "/v1/tools", nil, &out)
	return out, err
}

// Health checks the server is up.
func (c *Client) Health(ctx context.Context) error {
	var out apitype.Health
	_, _, err := c.do(ctx, http.MethodGet, "/healthz", nil, &out)
	return err
}

func (c *Client) invocation(ctx context.Context, method, path string, body any) (Response, error) {
	var inv apitype.Invocation
	status, hdr, err := c.do(ctx, method, path, body, &inv)
	if err != nil {
		return Response{}, err
	}
	resp := Response{Invocation: inv, Pending: status == http.StatusAccepted}
	if resp.Pending {
		resp.RetryAfter = time.Second
		if s, err := strconv.Atoi(hdr.Get("Retry-After")); err == nil && s > 0 {
			resp.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return resp, nil
}

// Do sends a request with a JSON body (when body is non-nil) and decodes a
// 2xx JSON answer into out. Refusals come back as *Error.
func (c *Client) do(ctx context.Context, method, path string, body, out any) (int, http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, fmt.Errorf("error encoding request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("error building request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("error calling maestro at %s: %w", c.baseURL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, resp.Header, fmt.Errorf("error reading maestro's answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, resp.Header, answerError(resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, resp.Header, fmt.Errorf("error decoding maestro's answer: %w", err)
		}
	}
	return resp.StatusCode, resp.Header, nil
}

// answerError is the error of a non-2xx answer: a refusal as *Error, else
// the status and body.
func answerError(status int, raw []byte) error {
	var ref struct {
		Observation mt.Observation `json:"observation"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil || ref.Observation.Status == "" {
		return fmt.Errorf("maestro answered HTTP %d: %s", status, bytes.TrimSpace(raw))
	}
	return &Error{StatusCode: status, Observation: ref.Observation}
}

// IsRefusal reports whether err is a refusal with the given code.
func IsRefusal(err error, code mt.Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Observation.Code == code
}
