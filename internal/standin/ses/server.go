// Package ses is a local stand-in for Amazon SES v2 SendEmail that the real
// sesv2 client can drive, read back like the aws-ses-v2-local emulator.
package ses

import (
	"net/http"
	"time"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

// Default credentials the stand-in accepts.
const (
	DefaultAccessKeyID     = "AKIASTANDIN000000000"
	DefaultSecretAccessKey = "standin/secret/access/key/0000000000000"
)

// Options configures a Server.
type Options struct {
	// AccessKeyID is the only access key the stand-in recognises.
	// Optional: default DefaultAccessKeyID.
	AccessKeyID string
	// SecretAccessKey verifies request signatures.
	// Optional: default DefaultSecretAccessKey.
	SecretAccessKey string
	// Now is the clock for message IDs and store timestamps.
	// Optional: default time.Now.
	Now func() time.Time
}

// Server is the stand-in, an http.Handler safe for concurrent use. It
// verifies SigV4 signatures, answers with SES's error types and message IDs,
// and accepts Simple and Raw content. Sent mail is read back with
// GET /store[?since=<unix seconds>] and cleared with POST /clear-store, in
// the aws-ses-v2-local emulator's shape so one reader works against both.
// Fault controls live under /_standin/faults.
type Server struct {
	accessKeyID     string
	secretAccessKey string
	now             func() time.Time
	store           *store
	faults          *fault.Injector
	handler         http.Handler
}

// New returns a Server with an empty store.
func New(opts Options) *Server {
	s := &Server{
		accessKeyID:     opts.AccessKeyID,
		secretAccessKey: opts.SecretAccessKey,
		now:             opts.Now,
		store:           &store{},
		faults:          fault.New(fault.Options{WriteError: writeStatusError}),
	}
	if s.accessKeyID == "" {
		s.accessKeyID = DefaultAccessKeyID
	}
	if s.secretAccessKey == "" {
		s.secretAccessKey = DefaultSecretAccessKey
	}
	if s.now == nil {
		s.now = time.Now
	}

	mux := http.NewServeMux()
	mux.Handle("POST /v2/email/outbound-emails", s.faults.Wrap(http.HandlerFunc(s.handleSend)))
	mux.HandleFunc("GET /store", s.handleStore)
	mux.HandleFunc("POST /clear-store", s.handleClear)
	s.faults.RegisterAdmin(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, &apiError{http.StatusNotFound, "UnknownOperationException", "Unknown operation"})
	})
	s.handler = mux
	return s
}

// ServeHTTP serves the SES API, the emulator-compatible store and the
// stand-in's admin paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// AccessKeyID is the access key the stand-in recognises.
func (s *Server) AccessKeyID() string { return s.accessKeyID }

// SecretAccessKey is the secret the stand-in verifies signatures with.
func (s *Server) SecretAccessKey() string { return s.secretAccessKey }

// Faults controls fault injection for this stand-in.
func (s *Server) Faults() *fault.Injector { return s.faults }

// Emails returns every accepted email, oldest first.
func (s *Server) Emails() []Email { return s.store.all() }

// CountEmails is how many emails were accepted, duplicates included.
func (s *Server) CountEmails() int { return s.store.count() }

// Clear empties the store.
func (s *Server) Clear() { s.store.clear() }
