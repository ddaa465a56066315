package sandbox

import (
	"crypto/rand"
	"net/http"
	"slices"
	"sync"
	"time"
)

const statusCancelled = "cancelled"

// Meta is the bookkeeping every object created through the API carries.
type Meta struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Status  string `json:"status"`
	Created int64  `json:"created"`
	// CancelCount counts the cancel requests that reached the object,
	// repeats included, so a test can prove a compensation ran exactly once
	// (an idempotent replay does not count: it never reaches the object).
	CancelCount int    `json:"cancel_count"`
	CancelledAt *int64 `json:"cancelled_at"`
}

// cancellable is a pointer to an object a collection stores.
type cancellable[T any] interface {
	*T
	meta() *Meta
}

// kind describes one resource type to the shared collection handlers.
type kind[T any] struct {
	object string // Stripe-style object name, e.g. "work_order"
	prefix string // ID prefix, e.g. "wo"
	path   string // collection path, e.g. "/v1/work_orders"
	status string // status on creation
	// build validates a create request body and returns the new object
	// without its Meta, which the collection fills in.
	build func(body []byte) (T, *apiError)
	// filters maps each list query parameter to the field it matches.
	filters map[string]func(*T) string
}

// collection stores one kind of cancellable object and serves its API:
// create, retrieve, list and cancel. Objects handed out are shallow copies;
// that is safe because pointer fields are replaced, never written through.
type collection[T any, P cancellable[T]] struct {
	kind kind[T]
	now  func() time.Time

	mu    sync.Mutex
	items []*T // creation order
	byID  map[string]*T
}

func newCollection[T any, P cancellable[T]](k kind[T], now func() time.Time) *collection[T, P] {
	return &collection[T, P]{kind: k, now: now, byID: map[string]*T{}}
}

func (c *collection[T, P]) register(mux *http.ServeMux) {
	mux.HandleFunc("POST "+c.kind.path, c.handleCreate)
	mux.HandleFunc("GET "+c.kind.path, c.handleList)
	mux.HandleFunc("GET "+c.kind.path+"/{id}", c.handleGet)
	mux.HandleFunc("POST "+c.kind.path+"/{id}/cancel", c.handleCancel)
}

func (c *collection[T, P]) insert(v T) T {
	m := P(&v).meta()
	*m = Meta{
		ID:      c.kind.prefix + "_" + rand.Text(),
		Object:  c.kind.object,
		Status:  c.kind.status,
		Created: c.now().Unix(),
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items = append(c.items, &v)
	c.byID[m.ID] = &v
	return v
}

func (c *collection[T, P]) get(id string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byID[id]
	if !ok {
		var zero T
		return zero, false
	}
	return *v, true
}

// all returns every object, oldest first.
func (c *collection[T, P]) all() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]T, len(c.items))
	for i, v := range c.items {
		out[i] = *v
	}
	return out
}

func (c *collection[T, P]) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// matching returns the objects whose fields equal every filter, newest
// first as Stripe lists them.
func (c *collection[T, P]) matching(filters map[string]string) []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []T
	for _, v := range slices.Backward(c.items) {
		if matches(v, c.kind.filters, filters) {
			out = append(out, *v)
		}
	}
	return out
}

// cancel reverses the object's effect. Cancelling again changes nothing but
// the count.
func (c *collection[T, P]) cancel(id string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byID[id]
	if !ok {
		var zero T
		return zero, false
	}
	m := P(v).meta()
	m.CancelCount++
	if m.Status != statusCancelled {
		at := c.now().Unix()
		m.Status, m.CancelledAt = statusCancelled, &at
	}
	return *v, true
}

func (c *collection[T, P]) handleCreate(w http.ResponseWriter, r *http.Request) {
	body, apiErr := readBody(w, r)
	if apiErr != nil {
		apiErr.write(w)
		return
	}
	v, apiErr := c.kind.build(body)
	if apiErr != nil {
		apiErr.write(w)
		return
	}
	writeJSON(w, http.StatusCreated, c.insert(v))
}

func (c *collection[T, P]) handleGet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v, ok := c.get(id)
	if !ok {
		noSuchObject(c.kind.object, id).write(w)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (c *collection[T, P]) handleList(w http.ResponseWriter, r *http.Request) {
	q, apiErr := parseListQuery(r.URL.Query(), c.kind.filters)
	if apiErr != nil {
		apiErr.write(w)
		return
	}
	id := func(v *T) string { return P(v).meta().ID }
	page, apiErr := paginate(c.matching(q.filters), id, q, c.kind.path)
	if apiErr != nil {
		apiErr.write(w)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (c *collection[T, P]) handleCancel(w http.ResponseWriter, r *http.Request) {
	body, apiErr := readBody(w, r)
	if apiErr != nil {
		apiErr.write(w)
		return
	}
	// Cancel takes no parameters, but an empty object is a fine way to say so.
	if len(body) > 0 {
		if apiErr := decodeParams(body, &struct{}{}); apiErr != nil {
			apiErr.write(w)
			return
		}
	}
	id := r.PathValue("id")
	v, ok := c.cancel(id)
	if !ok {
		noSuchObject(c.kind.object, id).write(w)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
