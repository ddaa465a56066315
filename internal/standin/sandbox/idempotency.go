package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

const (
	idempotencyHeader = "Idempotency-Key"
	replayedHeader    = "Idempotent-Replayed"
	maxKeyLength      = 255
)

// idempotency implements Stripe's Idempotency-Key semantics for POST and
// DELETE: the first request with a key runs and its response is kept; a
// repeat with the same method, path and parameters gets that response back
// byte for byte without running again; a repeat with anything different is
// refused with 422, and one that arrives while the first is still running
// with 409.
//
// Like Stripe, it keeps only responses from requests that began executing:
// a validation failure (400) or an injected fault leaves the key free, so
// the retry runs for real.
type idempotency struct {
	mu      sync.Mutex
	entries map[string]*idempotencyEntry
	replays int
}

type idempotencyEntry struct {
	fingerprint [sha256.Size]byte
	done        bool
	status      int
	contentType string
	body        []byte
}

func newIdempotency() *idempotency {
	return &idempotency{entries: map[string]*idempotencyEntry{}}
}

func (c *idempotency) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(idempotencyHeader)
		if key == "" || (r.Method != http.MethodPost && r.Method != http.MethodDelete) {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > maxKeyLength {
			invalidParam("", "Idempotency keys can be at most %d characters long.", maxKeyLength).write(w)
			return
		}
		body, apiErr := readBody(w, r)
		if apiErr != nil {
			apiErr.write(w)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))

		stored, apiErr := c.claim(key, fingerprint(r, body))
		if apiErr != nil {
			apiErr.write(w)
			return
		}
		if stored != nil {
			w.Header().Set("Content-Type", stored.contentType)
			w.Header().Set(replayedHeader, "true")
			w.WriteHeader(stored.status)
			_, _ = w.Write(stored.body)
			return
		}

		rec := &teeRecorder{ResponseWriter: w}
		finished := false
		// A panicking handler must not leave the key "in progress" forever.
		defer func() {
			if !finished {
				c.forget(key)
			}
		}()
		next.ServeHTTP(rec, r)
		finished = true
		if rec.status == http.StatusBadRequest || w.Header().Get(fault.Header) != "" {
			c.forget(key)
			return
		}
		c.complete(key, rec.status, w.Header().Get("Content-Type"), rec.body.Bytes())
	})
}

// claim registers key for a request with the given fingerprint. It returns
// the finished entry to replay, nothing if the caller should run the
// request, or the error for a conflicting use of the key.
func (c *idempotency) claim(key string, fp [sha256.Size]byte) (*idempotencyEntry, *apiError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	switch {
	case !ok:
		c.entries[key] = &idempotencyEntry{fingerprint: fp}
		return nil, nil
	case e.fingerprint != fp:
		return nil, &apiError{status: http.StatusUnprocessableEntity, Type: typeIdempotency,
			Message: "Keys for idempotent requests can only be used with the same parameters they were first used with."}
	case !e.done:
		return nil, &apiError{status: http.StatusConflict, Type: typeIdempotency,
			Message: "There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): " +
				key + ". Please try again later."}
	}
	c.replays++
	replay := *e
	return &replay, nil
}

func (c *idempotency) complete(key string, status int, contentType string, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	e.done, e.status, e.contentType, e.body = true, status, contentType, bytes.Clone(body)
}

func (c *idempotency) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}

func (c *idempotency) replayCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replays
}

// fingerprint identifies a request by method, path and parameters. JSON
// bodies are compared by meaning, so key order and spacing do not matter.
func fingerprint(r *http.Request, body []byte) [sha256.Size]byte {
	params := body
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil {
		if canonical, err := json.Marshal(v); err == nil {
			params = canonical
		}
	}
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.Path + "\n"))
	h.Write(params)
	return [sha256.Size]byte(h.Sum(nil))
}

// teeRecorder passes the response through while keeping a copy to replay.
type teeRecorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (t *teeRecorder) WriteHeader(status int) {
	if t.status == 0 {
		t.status = status
	}
	t.ResponseWriter.WriteHeader(status)
}

func (t *teeRecorder) Write(p []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	t.body.Write(p)
	return t.ResponseWriter.Write(p)
}
