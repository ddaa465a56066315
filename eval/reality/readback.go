package reality

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/maestro-run/maestro/internal/connectors"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/receipts/readback"
	"github.com/maestro-run/maestro/tools"
)

// twilioFailed are Twilio's message statuses that mean it will never
// arrive: a receipt for such a message proves no delivery.
var twilioFailed = []string{"failed", "undelivered", "canceled"}

// reader proves effects through the providers' own APIs. It holds nothing
// of maestro's ledger, so there is nothing local to fall back on.
type reader struct {
	providers *readback.Reader
	twilio    *twilioLister
	services  map[string]HTTPService
}

func newReader(cfg Config) (*reader, error) {
	twilioURL := cfg.Twilio.BaseURL
	if twilioURL == "" {
		twilioURL = connectors.TwilioConfig{}.WithDefaults().BaseURL
	}
	lister, err := newTwilioLister(twilioURL, cfg.Twilio.AccountSID, cfg.Twilio.AuthToken, cfg.timeout())
	if err != nil {
		return nil, err
	}
	return &reader{
		providers: &readback.Reader{
			TwilioURL:        twilioURL,
			TwilioAccountSID: cfg.Twilio.AccountSID,
			TwilioAuthToken:  cfg.Twilio.AuthToken,
			SESStoreURL:      cfg.SES.StoreURL,
			HTTP:             &http.Client{Timeout: cfg.timeout()},
		},
		twilio:   lister,
		services: cfg.HTTPServices,
	}, nil
}

// readBack reads the effect of one call back from every provider it
// touched and checks it is the effect that was asked for.
func (r *reader) readBack(ctx context.Context, tool *tools.Tool, fx *Fixture, call connectors.Call, receipt *mt.Receipt, args map[string]any) ([]ReadBack, error) {
	s := call.Settings
	switch tool.Connector.Kind {
	case mt.KindTwilioSMS:
		rb, err := r.sms(receipt.Fields[mt.ReceiptMessageSID], s["to"], s["body"])
		return []ReadBack{rb}, err
	case mt.KindSESEmail:
		rb, err := r.email(ctx, receipt.Fields[mt.ReceiptMessageID], s["to"], s["subject"], s["body"])
		return []ReadBack{rb}, err
	case mt.KindPage:
		sms, smsErr := r.sms(receipt.Fields[mt.ReceiptMessageSID], s["sms_to"], s["sms_body"])
		email, emailErr := r.email(ctx, receipt.Fields[mt.ReceiptMessageID], s["email_to"], s["email_subject"], s["email_body"])
		return []ReadBack{sms, email}, errors.Join(smsErr, emailErr)
	case mt.KindHTTP:
		path, err := render(tool.Name+" read", fx.Read, readData{Receipt: receipt, Args: args})
		if err != nil {
			return nil, err
		}
		rb, err := r.resource(ctx, s["service"], path, receipt.ID, fx.Expect)
		return []ReadBack{rb}, err
	}
	return nil, fmt.Errorf("no way to read back a %s effect", tool.Connector.Kind)
}

// sms fetches the message by SID and finds it in its recipient's list.
func (r *reader) sms(sid, to, body string) (ReadBack, error) {
	rb := ReadBack{Provider: "twilio", ID: sid}
	if sid == "" {
		return rb.failed(errors.New("the receipt has no message SID to read back"))
	}
	ev, err := r.providers.TwilioMessage(sid)
	if err != nil {
		return rb.failed(err)
	}
	rb.Status = ev.Status
	var problems []string
	if got := ev.Detail["to"]; got != to {
		problems = append(problems, fmt.Sprintf("Twilio has message %s addressed to %q, not %q", sid, got, to))
	}
	if got := ev.Detail["body"]; got != body {
		problems = append(problems, fmt.Sprintf("Twilio has message %s reading %q, not %q", sid, got, body))
	}
	if slices.Contains(twilioFailed, ev.Status) {
		problems = append(problems, fmt.Sprintf("Twilio reports message %s %s", sid, ev.Status))
	}
	found, err := r.twilio.listed(to, sid)
	if err != nil {
		return rb.failed(err)
	}
	if !found {
		problems = append(problems, fmt.Sprintf("message %s is missing from the list of messages to %s", sid, to))
	}
	rb.Checked = "fetched and listed; recipient and body match"
	return rb, problemsError(problems)
}

// email finds the message by ID in the emulator's store of accepted mail.
func (r *reader) email(ctx context.Context, id, to, subject, body string) (ReadBack, error) {
	rb := ReadBack{Provider: "ses", ID: id}
	switch {
	case id == "":
		return rb.failed(errors.New("the receipt has no message ID to read back"))
	case r.providers.SESStoreURL == "":
		return rb.failed(errors.New("no ses.store_url is configured: SES has no read API, so the email cannot be proven"))
	}
	ev, err := r.providers.SESMessage(ctx, id)
	if err != nil {
		return rb.failed(err)
	}
	rb.Status = ev.Status
	var stored struct {
		Destination struct {
			To []string `json:"to"`
		} `json:"destination"`
		Subject string `json:"subject"`
		Body    struct {
			Text string `json:"text"`
		} `json:"body"`
	}
	if err := remarshal(ev.Detail, &stored); err != nil {
		return rb.failed(fmt.Errorf("error decoding stored email %s: %w", id, err))
	}
	var problems []string
	if !slices.Contains(stored.Destination.To, to) {
		problems = append(problems, fmt.Sprintf("SES stored email %s for %v, not %q", id, stored.Destination.To, to))
	}
	if stored.Subject != subject {
		problems = append(problems, fmt.Sprintf("SES stored email %s with subject %q, not %q", id, stored.Subject, subject))
	}
	if strings.TrimSpace(stored.Body.Text) != strings.TrimSpace(body) {
		problems = append(problems, fmt.Sprintf("SES stored email %s with body %q, not %q", id, stored.Body.Text, body))
	}
	rb.Checked = "found in the store; recipient, subject and body match"
	return rb, problemsError(problems)
}

// resource GETs what an HTTP call created or changed. It must be the
// resource the receipt names, holding every expected field.
func (r *reader) resource(ctx context.Context, service, path, id string, expect map[string]any) (ReadBack, error) {
	rb := ReadBack{Provider: "http:" + service, ID: id}
	svc, ok := r.services[service]
	if !ok {
		return rb.failed(fmt.Errorf("HTTP service %q is not configured", service))
	}
	ev, err := r.providers.HTTPResource(ctx, svc.BaseURL, svc.Token, path)
	if err != nil {
		return rb.failed(err)
	}
	rb.Status = ev.Status
	if rb.Status == "" {
		rb.Status = "found"
	}
	var problems []string
	if ev.ID != id {
		problems = append(problems, fmt.Sprintf("GET %s answered with id %q, not the receipt's %q", path, ev.ID, id))
	}
	keys := slices.Sorted(maps.Keys(expect))
	for _, k := range keys {
		want, err := normalize(expect[k])
		if err != nil {
			return rb.failed(fmt.Errorf("error reading expectation %s: %w", k, err))
		}
		if got := ev.Detail[k]; !reflect.DeepEqual(got, want) {
			problems = append(problems, fmt.Sprintf("GET %s has %s = %v, want %v", path, k, jsonText(got), jsonText(want)))
		}
	}
	rb.Checked = "GET " + path + " matches the receipt's id"
	if len(keys) > 0 {
		rb.Checked += " and " + strings.Join(keys, ", ")
	}
	return rb, problemsError(problems)
}

func (rb ReadBack) failed(err error) (ReadBack, error) {
	rb.Error = err.Error()
	return rb, err
}

func problemsError(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "; "))
}

// normalize gives a YAML value the form encoding/json decodes a provider's
// answer into, so an expected 1 equals a read-back 1.0.
func normalize(v any) (any, error) {
	var out any
	err := remarshal(v, &out)
	return out, err
}

func remarshal(in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
