package callback

import (
	"net/http"
	"time"
)

// NewClient returns the client maestro posts to a URL it was given with:
// an agent's callback URL, a live call's control URL, an approver's
// webhook. It follows no redirect: a 3xx is an answer that is not an
// acceptance, and following it would carry a signed body to a host the
// catalog, or the signed request, never named. The caller sees the 3xx
// itself and treats it as a failed delivery.
func NewClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
