package ses

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
)

// Email is one accepted message, shaped (and JSON-encoded) exactly as the
// aws-ses-v2-local emulator stores it, so a reader of GET /store works
// against either.
type Email struct {
	MessageID   string       `json:"messageId"`
	From        string       `json:"from"`
	ReplyTo     []string     `json:"replyTo"`
	Destination Destination  `json:"destination"`
	Subject     string       `json:"subject"`
	Body        Body         `json:"body"`
	Attachments []Attachment `json:"attachments"`
	// At is when the stand-in accepted the message, in Unix seconds.
	At int64 `json:"at"`
	// Tags are the request's EmailTags. The emulator's store has no such
	// field, so they are offered to Go callers only.
	Tags []Tag `json:"-"`
}

// Destination holds the recipients by kind.
type Destination struct {
	To  []string `json:"to"`
	Cc  []string `json:"cc"`
	Bcc []string `json:"bcc"`
}

// Body holds the message's text and HTML parts; an absent part is omitted.
type Body struct {
	HTML string `json:"html,omitempty"`
	Text string `json:"text,omitempty"`
}

// Attachment is a file carried by the message.
type Attachment struct {
	Content     string `json:"content"` // base64
	ContentType string `json:"contentType"`
	Filename    string `json:"filename,omitempty"`
	Size        int    `json:"size"`
}

// Tag is one of the request's EmailTags.
type Tag struct {
	Name  string
	Value string
}

func (e Email) clone() Email {
	e.ReplyTo = slices.Clone(e.ReplyTo)
	e.Destination.To = slices.Clone(e.Destination.To)
	e.Destination.Cc = slices.Clone(e.Destination.Cc)
	e.Destination.Bcc = slices.Clone(e.Destination.Bcc)
	e.Attachments = slices.Clone(e.Attachments)
	e.Tags = slices.Clone(e.Tags)
	return e
}

// withEmptyLists makes absent lists empty so they encode as [], as the
// emulator's do.
func (e Email) withEmptyLists() Email {
	e.ReplyTo = nonNil(e.ReplyTo)
	e.Destination.To = nonNil(e.Destination.To)
	e.Destination.Cc = nonNil(e.Destination.Cc)
	e.Destination.Bcc = nonNil(e.Destination.Bcc)
	e.Attachments = nonNil(e.Attachments)
	return e
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

type store struct {
	mu     sync.Mutex
	emails []Email
}

func (s *store) add(e Email) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emails = append(s.emails, e)
}

// since returns the emails accepted at or after the Unix second at, oldest
// first.
func (s *store) since(at int64) []Email {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Email{}
	for _, e := range s.emails {
		if e.At >= at {
			out = append(out, e.clone())
		}
	}
	return out
}

func (s *store) all() []Email {
	return s.since(math.MinInt64)
}

func (s *store) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.emails)
}

func (s *store) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emails = nil
}

// storeView is the emulator's GET /store body. The stand-in keeps no
// templates but still sends the key, as the emulator does.
type storeView struct {
	Templates map[string]any `json:"templates"`
	Emails    []Email        `json:"emails"`
}

// handleStore serves GET /store[?since=<unix seconds>].
func (s *Server) handleStore(w http.ResponseWriter, r *http.Request) {
	var since int64
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || strconv.FormatInt(n, 10) != v {
			writeJSON(w, http.StatusBadRequest, map[string]string{
				"message": "Bad since query param, expected integer representing epoch timestamp in seconds",
			})
			return
		}
		since = n
	}
	writeJSON(w, http.StatusOK, storeView{Templates: map[string]any{}, Emails: s.store.since(since)})
}

// handleClear serves the emulator's POST /clear-store.
func (s *Server) handleClear(w http.ResponseWriter, _ *http.Request) {
	s.store.clear()
	writeJSON(w, http.StatusOK, map[string]string{"message": "Store cleared"})
}
