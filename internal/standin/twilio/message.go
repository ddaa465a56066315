package twilio

import (
	"fmt"
	"strconv"
	"time"
)

// apiVersion is the only Twilio REST version the stand-in speaks.
const apiVersion = "2010-04-01"

// Message statuses the stand-in moves through, one step per API read.
const (
	StatusQueued      = "queued"
	StatusSent        = "sent"
	StatusDelivered   = "delivered"
	StatusUndelivered = "undelivered"
	// StatusFailed is final: the message never left Twilio.
	StatusFailed = "failed"
)

// ErrorUnreachable is the error Twilio reports for a message the carrier
// could not deliver to the handset (30003, "Unreachable destination
// handset").
const ErrorUnreachable = 30003

// errorUnreachableMessage is the text Twilio gives with ErrorUnreachable.
const errorUnreachableMessage = "Unreachable destination handset"

// Message is one outbound message as the stand-in stores it.
type Message struct {
	SID                 string
	AccountSID          string
	To                  string
	From                string // empty when only a messaging service was named
	MessagingServiceSID string // empty when none was named
	Body                string
	MediaURLs           []string
	StatusCallback      string
	Status              string
	ErrorCode           int // zero unless the message failed or ended undelivered
	ErrorMessage        string
	NumSegments         int
	DateCreated         time.Time
	DateUpdated         time.Time
	DateSent            time.Time // zero until the message is sent
	// Undeliverable messages end undelivered, with ErrorCode set, instead
	// of delivered: the carrier refused them (see Server.Undeliverable).
	Undeliverable bool
}

// finalStatus is where the carrier takes the message after sent.
func (m *Message) finalStatus() string {
	if m.Undeliverable {
		return StatusUndelivered
	}
	return StatusDelivered
}

// advance moves the message one step along queued → sent → delivered (or
// undelivered, for a number the carrier cannot reach),
// standing in for the carrier progress a real reader would observe. Real
// Twilio sends within moments of accepting a message, so date_sent is the
// creation time rather than the time somebody happened to look.
func (m *Message) advance(now time.Time) {
	switch m.Status {
	case StatusQueued:
		m.Status = StatusSent
		m.DateSent = m.DateCreated
	case StatusSent:
		m.Status = m.finalStatus()
		if m.Status == StatusUndelivered {
			m.ErrorCode, m.ErrorMessage = ErrorUnreachable, errorUnreachableMessage
		}
	default:
		return
	}
	m.DateUpdated = now
}

// sentAt is the instant DateSent filters compare against: a message still
// queued here is dated as it will be once sent, so a reader need not fetch
// it before a date filter can find it.
func (m *Message) sentAt() time.Time {
	if m.DateSent.IsZero() {
		return m.DateCreated
	}
	return m.DateSent
}

func (m *Message) clone() Message {
	c := *m
	c.MediaURLs = append([]string(nil), m.MediaURLs...)
	return c
}

func (m *Message) uri() string {
	return fmt.Sprintf("/%s/Accounts/%s/Messages/%s.json", apiVersion, m.AccountSID, m.SID)
}

// messageResource is Message as Twilio serializes it, nulls included.
type messageResource struct {
	AccountSID          string            `json:"account_sid"`
	APIVersion          string            `json:"api_version"`
	Body                string            `json:"body"`
	DateCreated         string            `json:"date_created"`
	DateSent            *string           `json:"date_sent"`
	DateUpdated         string            `json:"date_updated"`
	Direction           string            `json:"direction"`
	ErrorCode           *int              `json:"error_code"`
	ErrorMessage        *string           `json:"error_message"`
	From                *string           `json:"from"`
	MessagingServiceSID *string           `json:"messaging_service_sid"`
	NumMedia            string            `json:"num_media"`
	NumSegments         string            `json:"num_segments"`
	Price               *string           `json:"price"`
	PriceUnit           string            `json:"price_unit"`
	SID                 string            `json:"sid"`
	Status              string            `json:"status"`
	SubresourceURIs     map[string]string `json:"subresource_uris"`
	To                  string            `json:"to"`
	URI                 string            `json:"uri"`
}

func (m *Message) resource() messageResource {
	base := fmt.Sprintf("/%s/Accounts/%s/Messages/%s", apiVersion, m.AccountSID, m.SID)
	return messageResource{
		AccountSID:          m.AccountSID,
		APIVersion:          apiVersion,
		Body:                m.Body,
		DateCreated:         formatDate(m.DateCreated),
		DateSent:            optionalDate(m.DateSent),
		DateUpdated:         formatDate(m.DateUpdated),
		Direction:           "outbound-api",
		ErrorCode:           optionalInt(m.ErrorCode),
		ErrorMessage:        optional(m.ErrorMessage),
		From:                optional(m.From),
		MessagingServiceSID: optional(m.MessagingServiceSID),
		NumMedia:            strconv.Itoa(len(m.MediaURLs)),
		NumSegments:         strconv.Itoa(m.NumSegments),
		PriceUnit:           "USD",
		SID:                 m.SID,
		Status:              m.Status,
		SubresourceURIs: map[string]string{
			"media":    base + "/Media.json",
			"feedback": base + "/Feedback.json",
		},
		To:  m.To,
		URI: m.uri(),
	}
}

// formatDate renders Twilio's RFC 2822 timestamps, always in GMT.
func formatDate(t time.Time) string {
	return t.UTC().Format(time.RFC1123Z)
}

func optionalDate(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatDate(t)
	return &s
}

func optionalInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
