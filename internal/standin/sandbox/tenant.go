package sandbox

import (
	"fmt"
	"net/http"
	"regexp"
	"sync"
)

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

// Tenant is a resident in the directory. Tenants are seeded, not created
// through the API; deleting one is irreversible.
type Tenant struct {
	ID           string `json:"id"`
	Object       string `json:"object"`
	Name         string `json:"name"`
	Unit         string `json:"unit"`
	Phone        string `json:"phone"` // E.164
	Email        string `json:"email"`
	BalanceCents int64  `json:"balance_cents"`
	Status       string `json:"status"`
	Deleted      bool   `json:"deleted"`
}

// DemoTenants is the default directory. Phone numbers are in the 555-01xx
// range reserved for fiction.
func DemoTenants() []Tenant {
	return []Tenant{
		{ID: "t_100", Name: "Maria Lopez", Unit: "4B", Phone: "+14155550100", Email: "maria.lopez@example.com", BalanceCents: 0, Status: "active"},
		{ID: "t_101", Name: "James Chen", Unit: "12A", Phone: "+14155550101", Email: "james.chen@example.com", BalanceCents: 125000, Status: "past_due"},
		{ID: "t_102", Name: "Aisha Okafor", Unit: "7C", Phone: "+14155550102", Email: "aisha.okafor@example.com", BalanceCents: -5000, Status: "active"},
		{ID: "t_103", Name: "Tom Becker", Unit: "2D", Phone: "+14155550103", Email: "tom.becker@example.com", BalanceCents: 0, Status: "moved_out"},
	}
}

// tenantFilters maps each list query parameter to the field it matches.
var tenantFilters = map[string]func(*Tenant) string{
	"phone":  func(t *Tenant) string { return t.Phone },
	"email":  func(t *Tenant) string { return t.Email },
	"status": func(t *Tenant) string { return t.Status },
}

// tenants is the directory, in seed order.
type tenants struct {
	mu    sync.Mutex
	order []*Tenant
	byID  map[string]*Tenant
}

func newTenants(seed []Tenant) (*tenants, error) {
	t := &tenants{byID: map[string]*Tenant{}}
	for _, tn := range seed {
		switch {
		case tn.ID == "":
			return nil, fmt.Errorf("error seeding tenant %q: id is required", tn.Name)
		case t.byID[tn.ID] != nil:
			return nil, fmt.Errorf("error seeding tenant %s: duplicate id", tn.ID)
		case !e164.MatchString(tn.Phone):
			return nil, fmt.Errorf("error seeding tenant %s: phone %q is not E.164", tn.ID, tn.Phone)
		}
		tn.Object = "tenant"
		t.order = append(t.order, &tn)
		t.byID[tn.ID] = &tn
	}
	return t, nil
}

func (t *tenants) get(id string) (Tenant, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tn, ok := t.byID[id]
	if !ok {
		return Tenant{}, false
	}
	return *tn, true
}

func (t *tenants) all() []Tenant {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Tenant, len(t.order))
	for i, tn := range t.order {
		out[i] = *tn
	}
	return out
}

// checkActive validates a tenant_id parameter: the tenant must exist and
// not be deleted.
func (t *tenants) checkActive(id string) *apiError {
	if id == "" {
		return missingParam("tenant_id")
	}
	tn, ok := t.get(id)
	switch {
	case !ok:
		return invalidParam("tenant_id", "No such tenant: '%s'", id)
	case tn.Deleted:
		return invalidParam("tenant_id", "Tenant '%s' has been deleted.", id)
	}
	return nil
}

// remove marks the tenant deleted. A deleted tenant can still be retrieved,
// but not deleted again, and no longer appears in lists.
func (t *tenants) remove(id string) (Tenant, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tn, ok := t.byID[id]
	if !ok || tn.Deleted {
		return Tenant{}, false
	}
	tn.Deleted = true
	return *tn, true
}

func (t *tenants) matching(filters map[string]string) []Tenant {
	var out []Tenant
	for _, tn := range t.all() {
		if !tn.Deleted && matches(&tn, tenantFilters, filters) {
			out = append(out, tn)
		}
	}
	return out
}

func (t *tenants) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/tenants", t.handleList)
	mux.HandleFunc("GET /v1/tenants/{id}", t.handleGet)
	mux.HandleFunc("DELETE /v1/tenants/{id}", t.handleDelete)
}

func (t *tenants) handleGet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	tn, ok := t.get(id)
	if !ok {
		noSuchObject("tenant", id).write(w)
		return
	}
	writeJSON(w, http.StatusOK, tn)
}

func (t *tenants) handleList(w http.ResponseWriter, r *http.Request) {
	q, apiErr := parseListQuery(r.URL.Query(), tenantFilters)
	if apiErr != nil {
		apiErr.write(w)
		return
	}
	id := func(tn *Tenant) string { return tn.ID }
	page, apiErr := paginate(t.matching(q.filters), id, q, "/v1/tenants")
	if apiErr != nil {
		apiErr.write(w)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (t *tenants) handleDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	tn, ok := t.remove(id)
	if !ok {
		noSuchObject("tenant", id).write(w)
		return
	}
	writeJSON(w, http.StatusOK, tn)
}
