package reality

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/twilio/twilio-go"
	twclient "github.com/twilio/twilio-go/client"
	twapi "github.com/twilio/twilio-go/rest/api/v2010"
)

// listLimit bounds how many of a recipient's messages are searched for the
// one just sent. Twilio lists newest first, so it is near the top.
const listLimit = 100

// twilioLister lists a recipient's messages with twilio-go: the query
// maestro's reconciliation relies on to find a message whose answer was
// lost, so its page shape is checked against Twilio's too.
type twilioLister struct {
	api *twapi.ApiService
}

func newTwilioLister(baseURL, accountSID, authToken string, timeout time.Duration) (*twilioLister, error) {
	base, err := url.Parse(baseURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("error parsing Twilio URL %q: want scheme://host[:port]", baseURL)
	}
	// twilio-go always addresses api.twilio.com; send it to the
	// configured endpoint instead, keeping path and query.
	hc := &http.Client{Timeout: timeout, Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		out := req.Clone(req.Context())
		out.URL.Scheme, out.URL.Host, out.Host = base.Scheme, base.Host, base.Host
		return http.DefaultTransport.RoundTrip(out)
	})}
	c := &twclient.Client{Credentials: twclient.NewCredentials(accountSID, authToken), HTTPClient: hc}
	c.SetAccountSid(accountSID)
	return &twilioLister{api: twilio.NewRestClientWithParams(twilio.ClientParams{Client: c}).Api}, nil
}

// listed reports whether the message sid appears in to's message list.
func (l *twilioLister) listed(to, sid string) (bool, error) {
	msgs, err := l.api.ListMessage((&twapi.ListMessageParams{}).SetTo(to).SetPageSize(50).SetLimit(listLimit))
	if err != nil {
		return false, fmt.Errorf("error listing Twilio messages to %s: %w", to, err)
	}
	for _, m := range msgs {
		if m.Sid != nil && *m.Sid == sid {
			return true, nil
		}
	}
	return false, nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
