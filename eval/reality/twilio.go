package reality

import (
	"fmt"
	"time"

	twapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/maestro-run/maestro/internal/connectors"
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
	api, err := connectors.NewTwilioAPI(baseURL, accountSID, authToken, timeout)
	if err != nil {
		return nil, err
	}
	return &twilioLister{api: api}, nil
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
