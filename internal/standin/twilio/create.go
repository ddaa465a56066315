package twilio

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

const (
	maxBodyChars  = 1600
	maxFormBytes  = 1 << 20
	channelPrefix = "whatsapp:"
)

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

// handleCreate sends a message. It deliberately does not deduplicate: the
// Messages API takes no idempotency key, so preventing a double send is the
// caller's job, and a duplicate here is evidence that the caller failed.
func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		writeError(w, badRequest(codeInvalidParameter, "Unable to parse request body: %v", err))
		return
	}
	m, apiErr := s.messageFromForm(r.PostForm)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	s.store.add(m)
	s.startStatusCallbacks(m)
	writeJSON(w, http.StatusCreated, m.resource())
}

func (s *Server) messageFromForm(form url.Values) (Message, *apiError) {
	to := form.Get("To")
	from := form.Get("From")
	service := form.Get("MessagingServiceSid")
	body := form.Get("Body")
	media := form["MediaUrl"]

	switch {
	case to == "":
		return Message{}, badRequest(codeToRequired, "A 'To' phone number is required.")
	case !e164.MatchString(strings.TrimPrefix(to, channelPrefix)):
		return Message{}, badRequest(codeInvalidTo, "The 'To' number %s is not a valid phone number.", to)
	case from == "" && service == "":
		return Message{}, badRequest(codeFromRequired, "A 'From' phone number is required.")
	case body == "" && len(media) == 0:
		return Message{}, badRequest(codeBodyRequired, "Message body is required.")
	case utf8.RuneCountInString(body) > maxBodyChars:
		return Message{}, badRequest(codeBodyTooLong, "The concatenated message body exceeds the %d character limit.", maxBodyChars)
	}
	for _, u := range media {
		if parsed, err := url.Parse(u); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return Message{}, badRequest(codeInvalidMediaURL, "Invalid media URL(s): %s", u)
		}
	}

	now := s.now()
	status, errCode, errMsg := StatusQueued, 0, ""
	if s.failAtCreate[to] {
		status, errCode, errMsg = StatusFailed, ErrorUnreachable, errorUnreachableMessage
	}
	return Message{
		Undeliverable:       s.undeliverable(to),
		SID:                 newSID("SM"),
		AccountSID:          s.accountSID,
		To:                  to,
		From:                from,
		MessagingServiceSID: service,
		Body:                s.rewrite(body),
		MediaURLs:           append([]string(nil), media...),
		StatusCallback:      form.Get("StatusCallback"),
		Status:              status,
		ErrorCode:           errCode,
		ErrorMessage:        errMsg,
		NumSegments:         segmentCount(s.rewrite(body)),
		DateCreated:         now,
		DateUpdated:         now,
	}, nil
}

// newSID returns a Twilio-shaped SID: a two-letter type prefix and 32
// lowercase hex digits.
func newSID(prefix string) string {
	b := make([]byte, 16)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
