// Package sandbox is a stateful stand-in for a generic HTTP API, a property
// manager's back office, with Stripe-style errors and idempotency keys.
package sandbox

import (
	"fmt"
	"net/http"
	"time"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

// DefaultToken is the bearer token accepted when Options.Token is empty.
const DefaultToken = "sk_test_standin"

// Options configures a Server.
type Options struct {
	// Token is the bearer token clients must present.
	// Optional: default DefaultToken.
	Token string
	// Tenants seeds the tenant directory; an empty non-nil slice seeds none.
	// Optional: default DemoTenants().
	Tenants []Tenant
	// Now is the clock for created and cancelled timestamps.
	// Optional: default time.Now.
	Now func() time.Time
}

// Server is the stand-in, an http.Handler safe for concurrent use. It serves
// a seeded tenant directory (deleting a tenant is irreversible) and work
// orders and refunds, which share one generic collection: create, retrieve,
// list (filtered, newest first, paged with limit and starting_after) and
// cancel. Every call needs the bearer token; every POST and DELETE honours
// Idempotency-Key. Fault controls live under /_standin/faults.
type Server struct {
	token       string
	tenants     *tenants
	workOrders  *collection[WorkOrder, *WorkOrder]
	refunds     *collection[Refund, *Refund]
	idempotency *idempotency
	faults      *fault.Injector
	handler     http.Handler
}

// New returns a Server with the seeded tenants and no work orders or refunds.
func New(opts Options) (*Server, error) {
	if opts.Token == "" {
		opts.Token = DefaultToken
	}
	if opts.Tenants == nil {
		opts.Tenants = DemoTenants()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	directory, err := newTenants(opts.Tenants)
	if err != nil {
		return nil, fmt.Errorf("error creating sandbox stand-in: %w", err)
	}
	s := &Server{
		token:       opts.Token,
		tenants:     directory,
		idempotency: newIdempotency(),
		faults:      fault.New(fault.Options{WriteError: writeStatusError}),
	}
	s.workOrders = newCollection[WorkOrder, *WorkOrder](s.workOrderKind(), opts.Now)
	s.refunds = newCollection[Refund, *Refund](s.refundKind(), opts.Now)

	api := http.NewServeMux()
	s.tenants.register(api)
	s.workOrders.register(api)
	s.refunds.register(api)
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		(&apiError{status: http.StatusNotFound, Type: typeInvalidRequest,
			Message: fmt.Sprintf("Unrecognized request URL (%s: %s).", r.Method, r.URL.Path)}).write(w)
	})

	// Faults before the effect sit inside the idempotency layer, so a hung
	// request holds its key (a concurrent retry sees 409) and an injected
	// failure is never saved. Faults after the effect sit outside it, so the
	// response is saved before it is lost and a retry replays it.
	root := http.NewServeMux()
	s.faults.RegisterAdmin(root)
	root.Handle("/", s.faults.After(s.authenticate(s.idempotency.middleware(s.faults.Before(api)))))
	s.handler = root
	return s, nil
}

// ServeHTTP serves the API and the stand-in's admin paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// Token is the bearer token the stand-in accepts.
func (s *Server) Token() string { return s.token }

// Faults controls fault injection for this stand-in.
func (s *Server) Faults() *fault.Injector { return s.faults }

// Tenants returns the directory, deleted tenants included, in seed order.
func (s *Server) Tenants() []Tenant { return s.tenants.all() }

// Tenant returns one tenant, deleted or not.
func (s *Server) Tenant(id string) (Tenant, bool) { return s.tenants.get(id) }

// WorkOrders returns every work order, oldest first.
func (s *Server) WorkOrders() []WorkOrder { return s.workOrders.all() }

// WorkOrder returns one work order.
func (s *Server) WorkOrder(id string) (WorkOrder, bool) { return s.workOrders.get(id) }

// CountWorkOrders is how many work orders were created, cancelled ones
// included.
func (s *Server) CountWorkOrders() int { return s.workOrders.count() }

// Refunds returns every refund, oldest first.
func (s *Server) Refunds() []Refund { return s.refunds.all() }

// Refund returns one refund.
func (s *Server) Refund(id string) (Refund, bool) { return s.refunds.get(id) }

// CountRefunds is how many refunds were created, cancelled ones included.
func (s *Server) CountRefunds() int { return s.refunds.count() }

// IdempotentReplays is how many requests were answered from the
// idempotency cache instead of running.
func (s *Server) IdempotentReplays() int { return s.idempotency.replayCount() }
