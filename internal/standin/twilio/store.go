package twilio

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"time"
)

// Page tokens carry the SID the page continues from: "PA" pages after it,
// "PB" before it, the way Twilio's own tokens do.
const (
	tokenAfter  = "PA"
	tokenBefore = "PB"
)

var errBadPageToken = errors.New("invalid page token")

// store keeps every message the stand-in accepted, in creation order.
type store struct {
	mu       sync.Mutex
	messages []*Message
	bySID    map[string]*Message
}

func newStore() *store {
	return &store{bySID: map[string]*Message{}}
}

func (s *store) add(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = append(s.messages, &m)
	s.bySID[m.SID] = &m
}

// read returns the message as an API reader sees it, advancing it first.
func (s *store) read(account, sid string, now time.Time) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.bySID[sid]
	if !ok || m.AccountSID != account {
		return Message{}, false
	}
	m.advance(now)
	return m.clone(), true
}

// peek returns a message without the side effect of an API read.
func (s *store) peek(sid string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.bySID[sid]
	if !ok {
		return Message{}, false
	}
	return m.clone(), true
}

func (s *store) all() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		out[i] = m.clone()
	}
	return out
}

func (s *store) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.messages)
}

// pageRequest positions a list page: by token when the client follows a
// next/previous link, otherwise by page number.
type pageRequest struct {
	size  int
	page  int
	token string
}

type pageResult struct {
	messages  []Message
	hasBefore bool
	hasAfter  bool
}

// list returns one page of the account's matching messages, newest first,
// advancing each message on it as an API read does.
func (s *store) list(account string, match func(*Message) bool, req pageRequest, now time.Time) (pageResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()

	var matched []*Message
	for _, m := range slices.Backward(s.messages) {
		if m.AccountSID == account && match(m) {
			matched = append(matched, m)
		}
	}

	start, end, err := window(matched, req)
	if err != nil {
		return pageResult{}, err
	}
	res := pageResult{hasBefore: start > 0, hasAfter: end < len(matched)}
	for _, m := range matched[start:end] {
		m.advance(now)
		res.messages = append(res.messages, m.clone())
	}
	return res, nil
}

func window(matched []*Message, req pageRequest) (start, end int, err error) {
	indexOf := func(sid string) int {
		return slices.IndexFunc(matched, func(m *Message) bool { return m.SID == sid })
	}
	switch {
	case req.token == "":
		start = min(req.page*req.size, len(matched))
		end = min(start+req.size, len(matched))
	case strings.HasPrefix(req.token, tokenAfter):
		i := indexOf(strings.TrimPrefix(req.token, tokenAfter))
		if i < 0 {
			return 0, 0, errBadPageToken
		}
		start = i + 1
		end = min(start+req.size, len(matched))
	case strings.HasPrefix(req.token, tokenBefore):
		i := indexOf(strings.TrimPrefix(req.token, tokenBefore))
		if i < 0 {
			return 0, 0, errBadPageToken
		}
		start = max(i-req.size, 0)
		end = i
	default:
		return 0, 0, errBadPageToken
	}
	return start, end, nil
}
