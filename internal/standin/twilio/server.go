// Package twilio is a local stand-in for Twilio Programmable Messaging
// (REST API 2010-04-01) that the real twilio-go client can drive.
package twilio

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

// Default credentials; twilio-go only accepts alphanumeric ones.
const (
	DefaultAccountSID = "AC00000000000000000000000000000000"
	DefaultAuthToken  = "standinauthtoken"
)

var alphanumeric = regexp.MustCompile(`^[A-Za-z0-9]+$`)

// Options configures a Server.
type Options struct {
	// AccountSID is the only account the stand-in serves and the Basic auth
	// user name. Optional: default DefaultAccountSID.
	AccountSID string
	// AuthToken is the Basic auth password. Optional: default DefaultAuthToken.
	AuthToken string
	// Now is the clock for message timestamps. Optional: default time.Now.
	Now func() time.Time
	// TrialAccount stores every body behind TrialPrefix, as Twilio does for
	// a trial account. Optional: default false.
	TrialAccount bool
	// SmartEncoding stores every body with curly quotes, long dashes and
	// other look-alike Unicode replaced by their GSM-7 equivalents, as
	// Twilio's Smart Encoding does. Optional: default false.
	SmartEncoding bool
	// Unreachable lists recipients whose handsets cannot be reached: a
	// message to one is created "failed" with error 30003 and never
	// advances, as Twilio answers for a number that cannot receive texts.
	// Optional: default none.
	Unreachable []string
}

// Server is the stand-in, an http.Handler safe for concurrent use. It sends,
// fetches and lists messages with Twilio's paths, Basic auth, JSON and error
// codes, and serves fault controls under /_standin/faults.
//
// Messages are created "queued" and advance one step per API read (a fetch,
// or appearing on a list page): queued → sent → delivered. Sends are never
// deduplicated, as with real Twilio.
type Server struct {
	accountSID string
	authToken  string
	now        func() time.Time
	rewrite    func(string) string
	// failAtCreate lists recipients whose messages Twilio refuses outright:
	// created failed, never sent.
	failAtCreate map[string]bool
	store        *store
	faults       *fault.Injector
	handler      http.Handler

	mu          sync.Mutex
	unreachable map[string]bool // numbers the carrier cannot deliver to

	// callbacksMu guards callbacksPaused against a send starting while
	// PauseStatusCallbacks waits for those in flight.
	callbacksMu     sync.RWMutex
	callbacksPaused bool
	callbacks       sync.WaitGroup
}

// New returns a Server with no messages.
func New(opts Options) (*Server, error) {
	s := &Server{
		accountSID:   opts.AccountSID,
		authToken:    opts.AuthToken,
		now:          opts.Now,
		rewrite:      bodyRewriter(opts.TrialAccount, opts.SmartEncoding),
		failAtCreate: map[string]bool{},
		store:        newStore(),
		faults:       fault.New(fault.Options{WriteError: writeStatusError}),
	}
	if s.accountSID == "" {
		s.accountSID = DefaultAccountSID
	}
	if s.authToken == "" {
		s.authToken = DefaultAuthToken
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, to := range opts.Unreachable {
		s.failAtCreate[to] = true
	}
	if !alphanumeric.MatchString(s.accountSID) || !alphanumeric.MatchString(s.authToken) {
		return nil, errors.New("error creating twilio stand-in: account SID and auth token must be alphanumeric")
	}

	api := http.NewServeMux()
	messages := "/" + apiVersion + "/Accounts/{AccountSid}/Messages"
	api.HandleFunc("POST "+messages+".json", s.ownAccount(s.handleCreate))
	api.HandleFunc("GET "+messages+".json", s.ownAccount(s.handleList))
	api.HandleFunc("GET "+messages+"/{file}", s.ownAccount(s.handleFetch))
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound(r.URL.Path))
	})

	root := http.NewServeMux()
	s.faults.RegisterAdmin(root)
	root.HandleFunc("POST /_standin/undeliverable", s.handleUndeliverable)
	root.Handle("/", s.faults.Wrap(s.authenticate(api)))
	s.handler = root
	return s, nil
}

// ServeHTTP serves the Twilio API and the stand-in's admin paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// AccountSID is the account the stand-in serves.
func (s *Server) AccountSID() string { return s.accountSID }

// AuthToken is the token the stand-in accepts.
func (s *Server) AuthToken() string { return s.authToken }

// Faults controls fault injection for this stand-in.
func (s *Server) Faults() *fault.Injector { return s.faults }

// Messages returns every message sent, oldest first. Unlike an API read it
// does not advance their status.
func (s *Server) Messages() []Message { return s.store.all() }

// Message returns one message without advancing its status.
func (s *Server) Message(sid string) (Message, bool) { return s.store.peek(sid) }

// Undeliverable makes the carrier refuse every later message to the number
// to: it is accepted (queued) as any other, then goes sent → undelivered
// with ErrorUnreachable, in reads and status callbacks alike, the way a
// message to a switched-off or disconnected handset does.
func (s *Server) Undeliverable(to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unreachable == nil {
		s.unreachable = map[string]bool{}
	}
	s.unreachable[to] = true
}

func (s *Server) undeliverable(to string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unreachable[to]
}

// handleUndeliverable is Undeliverable over HTTP, for tests that drive the
// stand-in from outside: POST /_standin/undeliverable with {"to": "+1…"}.
func (s *Server) handleUndeliverable(w http.ResponseWriter, r *http.Request) {
	var body struct {
		To string `json:"to"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || !e164.MatchString(body.To) {
		http.Error(w, `the body must be {"to": "<E.164 number>"}`, http.StatusBadRequest)
		return
	}
	s.Undeliverable(body.To)
	w.WriteHeader(http.StatusNoContent)
}

// CountMessages is how many messages were sent, duplicates included.
func (s *Server) CountMessages() int { return s.store.count() }
