package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/twilio/twilio-go"
	twclient "github.com/twilio/twilio-go/client"
	twapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/maestro-run/maestro/maestrotype"
)

// TwilioConfig configures the Twilio Messages connector.
type TwilioConfig struct {
	// BaseURL is the Messages API endpoint. Optional: default
	// "https://api.twilio.com".
	BaseURL string
	// AccountSID and AuthToken authenticate (both alphanumeric). Required.
	AccountSID string
	AuthToken  string
	// From is the sending number in E.164. Required.
	From string
	// Timeout bounds each request; twilio-go ignores contexts, so this is the
	// only bound. Optional: default 10s.
	Timeout time.Duration
	// StatusCallback is the URL Twilio posts each message's status changes
	// to. When set, every CreateMessage asks for it. Optional: default none.
	StatusCallback string
}

// WithDefaults returns c with optional fields filled in.
func (c TwilioConfig) WithDefaults() TwilioConfig {
	if c.BaseURL == "" {
		c.BaseURL = "https://api.twilio.com"
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	return c
}

func (c TwilioConfig) validate() error {
	if c.AccountSID == "" || c.AuthToken == "" {
		return errors.New("twilio: account SID and auth token are required")
	}
	if c.From == "" {
		return errors.New("twilio: a From number is required")
	}
	return nil
}

// Twilio sends SMS through the real twilio-go client.
type Twilio struct {
	api            *twapi.ApiService
	from           string
	statusCallback string
}

// NewTwilio builds the connector.
func NewTwilio(cfg TwilioConfig) (*Twilio, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	api, err := NewTwilioAPI(cfg.BaseURL, cfg.AccountSID, cfg.AuthToken, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	return &Twilio{api: api, from: cfg.From, statusCallback: cfg.StatusCallback}, nil
}

// NewTwilioAPI builds a twilio-go API client for the Messages API at
// baseURL, bounded by timeout since twilio-go ignores contexts. Readers
// that check effects at Twilio build their own client with it, apart from
// the connector that performed them.
func NewTwilioAPI(baseURL, accountSID, authToken string, timeout time.Duration) (*twapi.ApiService, error) {
	rt, err := newRewriteTransport(baseURL, nil)
	if err != nil {
		return nil, fmt.Errorf("twilio: %w", err)
	}
	httpClient := &http.Client{
		Transport: rt,
		Timeout:   timeout,
		// Twilio answers directly; a redirect would be a misconfiguration.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	base := &twclient.Client{Credentials: twclient.NewCredentials(accountSID, authToken), HTTPClient: httpClient}
	base.SetAccountSid(accountSID)
	return twilio.NewRestClientWithParams(twilio.ClientParams{Client: base}).Api, nil
}

// Do sends one SMS. Twilio's Messages API accepts no idempotency key, so
// exactly-once rests on the ledger and on reconciliation by listing.
func (t *Twilio) Do(ctx context.Context, call Call) (Result, error) {
	to, err := call.Setting("to")
	if err != nil {
		return Result{}, err
	}
	body, err := call.Setting("body")
	if err != nil {
		return Result{}, err
	}
	msg, err := t.send(ctx, to, body)
	if err != nil {
		return Result{}, err
	}
	if TwilioStatusMeaning(deref(msg.Status)) == StatusFailed {
		return Result{}, twilioFailed(msg)
	}
	return twilioResult(msg)
}

// twilioFailed explains a message Twilio reports as failed, with Twilio's
// own error code and message when it gave them.
func twilioFailed(msg *twapi.ApiV2010Message) *Error {
	code, detail := "", deref(msg.ErrorMessage)
	if msg.ErrorCode != nil {
		code = strconv.Itoa(*msg.ErrorCode)
		detail = strings.TrimSpace("error " + code + " " + detail)
	}
	return failedStatus("twilio", deref(msg.Sid), deref(msg.Status), code, detail)
}

func (t *Twilio) send(ctx context.Context, to, body string) (*twapi.ApiV2010Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Class: ClassUnreachable, Provider: "twilio", Message: "not sent: " + err.Error(), Err: err}
	}
	params := (&twapi.CreateMessageParams{}).SetTo(to).SetFrom(t.from).SetBody(body)
	if t.statusCallback != "" {
		params.SetStatusCallback(t.statusCallback)
	}
	msg, err := t.api.CreateMessage(params)
	if err != nil {
		return nil, classifyTwilio(err)
	}
	if msg.Sid == nil || *msg.Sid == "" {
		// A 2xx without a SID proves nothing; treat it as unknown.
		return nil, &Error{Class: ClassUnknown, Provider: "twilio", Message: "Twilio answered without a message SID"}
	}
	return msg, nil
}

// FetchMessage reads a message back from Twilio.
func (t *Twilio) FetchMessage(sid string) (*twapi.ApiV2010Message, error) {
	msg, err := t.api.FetchMessage(sid, &twapi.FetchMessageParams{})
	if err != nil {
		return nil, classifyTwilio(err)
	}
	return msg, nil
}

func twilioResult(msg *twapi.ApiV2010Message) (Result, error) {
	status := ""
	if msg.Status != nil {
		status = *msg.Status
	}
	payload, err := json.Marshal(map[string]string{
		"message_sid": *msg.Sid,
		"status":      status,
		"to":          deref(msg.To),
	})
	if err != nil {
		return Result{}, fmt.Errorf("error encoding twilio payload: %w", err)
	}
	return Result{
		Receipt: &maestrotype.Receipt{
			Provider: "twilio",
			ID:       *msg.Sid,
			Status:   status,
			Fields:   map[string]string{maestrotype.ReceiptMessageSID: *msg.Sid, maestrotype.ReceiptStatus: status},
			IssuedAt: time.Now().UTC(),
		},
		Payload: payload,
	}, nil
}

func classifyTwilio(err error) *Error {
	var rest *twclient.TwilioRestError
	if errors.As(err, &rest) {
		return &Error{
			Class:        classifyStatus(rest.Status),
			Provider:     "twilio",
			HTTPStatus:   rest.Status,
			ProviderCode: strconv.Itoa(rest.Code),
			Message:      rest.Message,
			Err:          err,
		}
	}
	return classifyTransport("twilio", err)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// lookupLimit bounds the messages one lookup reads. A search that reaches
// it without getting back past its start time is incomplete.
const lookupLimit = 200

// Lookup lists the messages sent from maestro's number to the call's
// recipient, newest first, and keeps those created at or after since whose
// body is the call's (see twilioBodyMatch). Twilio keeps no operation key
// on a message (the Messages API takes none), so a match rests on
// recipient, sender and time window, with the body as supporting evidence;
// each match says so in its Evidence.
//
// It filters on date_created itself rather than asking Twilio to filter on
// DateSent: date_sent stays null while a message is queued, and a queued
// message is exactly the one a lost answer is likely to leave behind.
func (t *Twilio) Lookup(ctx context.Context, call Call, since time.Time) (Lookup, error) {
	to, err := call.Setting("to")
	if err != nil {
		return Lookup{}, err
	}
	body, err := call.Setting("body")
	if err != nil {
		return Lookup{}, err
	}
	if err := ctx.Err(); err != nil {
		return Lookup{}, &Error{Class: ClassUnreachable, Provider: "twilio", Message: "not looked up: " + err.Error(), Err: err}
	}
	params := (&twapi.ListMessageParams{}).SetTo(to).SetFrom(t.from).SetPageSize(50).SetLimit(lookupLimit)
	msgs, err := t.api.ListMessage(params)
	if err != nil {
		return Lookup{}, classifyTwilio(err)
	}
	found := Lookup{Complete: len(msgs) < lookupLimit}
	for i := range msgs {
		m := &msgs[i]
		created, err := time.Parse(time.RFC1123Z, deref(m.DateCreated))
		if err != nil {
			return Lookup{}, &Error{Class: ClassUnknown, Provider: "twilio", Message: fmt.Sprintf("message %s has an unreadable date_created %q", deref(m.Sid), deref(m.DateCreated)), Err: err}
		}
		if created.Before(since) {
			// Newest first: everything from here on is older.
			found.Complete = true
			break
		}
		// The list was filtered by To and From; a record that says
		// otherwise is not trusted to be ours.
		if deref(m.Sid) == "" || deref(m.To) != to || deref(m.From) != t.from {
			continue
		}
		bodyWhy, ok := twilioBodyMatch(body, deref(m.Body))
		if !ok {
			continue
		}
		res, err := twilioResult(m)
		if err != nil {
			return Lookup{}, err
		}
		found.Matches = append(found.Matches, Match{Result: res, Evidence: fmt.Sprintf(
			"message %s: recipient %s and sender %s match, created %s, within the search window from %s; %s; "+
				"Twilio keeps no operation key on a message, so none could be compared",
			deref(m.Sid), to, t.from, created.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339), bodyWhy)})
	}
	return found, nil
}
