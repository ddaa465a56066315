package twilio

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// callbackClient posts status callbacks. Its timeout bounds the goroutine
// each callback runs in, so a receiver that never answers cannot pin one.
var callbackClient = &http.Client{Timeout: 5 * time.Second}

// PauseStatusCallbacks stops (or, with false, resumes) reporting the
// progress of messages created from now on, as a carrier that reports
// nothing would; pausing returns once the reports already under way are
// done. What a message's sender records of its reports can then be told
// apart from what it records of the send.
func (s *Server) PauseStatusCallbacks(paused bool) {
	s.callbacksMu.Lock()
	s.callbacksPaused = paused
	s.callbacksMu.Unlock()
	if paused {
		s.callbacks.Wait()
	}
}

func (s *Server) startStatusCallbacks(m Message) {
	s.callbacksMu.RLock()
	defer s.callbacksMu.RUnlock()
	if m.StatusCallback == "" || s.callbacksPaused {
		return
	}
	s.callbacks.Go(func() { s.sendStatusCallbacks(m) })
}

// sendStatusCallbacks reports a message's carrier progress to the
// StatusCallback URL it was created with, as Twilio does: one form-encoded
// POST per status, in order, each signed with X-Twilio-Signature and
// carrying its own I-Twilio-Idempotency-Token. A message the carrier cannot
// reach ends undelivered, with its ErrorCode. It stops at the first refused
// or failed post, because Twilio does not retry status callbacks either; a
// receiver must not depend on seeing every step.
func (s *Server) sendStatusCallbacks(m Message) {
	statuses := []string{StatusSent, m.finalStatus()}
	if m.Status == StatusFailed {
		statuses = []string{StatusFailed}
	}
	for _, status := range statuses {
		form := url.Values{
			"AccountSid":    {m.AccountSID},
			"ApiVersion":    {apiVersion},
			"From":          {m.From},
			"MessageSid":    {m.SID},
			"MessageStatus": {status},
			"SmsSid":        {m.SID},
			"SmsStatus":     {status},
			"To":            {m.To},
		}
		if status == StatusUndelivered {
			form.Set("ErrorCode", strconv.Itoa(ErrorUnreachable))
		}
		if !postCallback(m.StatusCallback, form, s.authToken) {
			return
		}
	}
}

func postCallback(target string, form url.Values, authToken string) bool {
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", Signature(authToken, target, form))
	req.Header.Set("I-Twilio-Idempotency-Token", newSID("ID"))
	resp, err := callbackClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}

// Signature computes X-Twilio-Signature for a form POST to target: the
// base64 HMAC-SHA1, keyed by the auth token, of the full URL followed by
// every parameter name and value, sorted by name. Receivers verify it with
// twilio-go's RequestValidator; it is exported so tests can sign (and
// forge) callbacks without the stand-in.
func Signature(authToken, target string, form url.Values) string {
	names := make([]string, 0, len(form))
	for name := range form {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(target)
	for _, name := range names {
		for _, v := range form[name] {
			b.WriteString(name)
			b.WriteString(v)
		}
	}
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
