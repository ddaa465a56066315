// Package readback reads a performed effect back from the provider that
// holds it, with clients of its own, never from maestro's ledger.
package readback

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	twapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/maestro-run/maestro/internal/connectors"
)

// Evidence is what a provider's own API says about an effect. Reading it
// back never consults maestro's ledger.
type Evidence struct {
	Provider string
	ID       string
	Status   string
	// Detail is the provider's record, for printing.
	Detail map[string]any
}

// Reader reads a performed effect back from where its provider records it
// (Twilio's Messages API, an SES emulator's store of sent mail, an HTTP
// service's resource), with clients of its own, independent of the
// connectors that performed it.
type Reader struct {
	// TwilioURL, TwilioAccountSID and TwilioAuthToken reach Twilio's
	// Messages API.
	TwilioURL        string
	TwilioAccountSID string
	TwilioAuthToken  string
	// SESStoreURL is an SES emulator's base URL; its GET /store lists sent
	// mail. Real SES has no such read API (delivery events go to SNS).
	SESStoreURL string
	// HTTP is the client for HTTP services. Optional: default a 10s client.
	HTTP *http.Client
}

func (r *Reader) httpClient() *http.Client {
	if r.HTTP != nil {
		return r.HTTP
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// TwilioMessage fetches a message by SID with twilio-go.
func (r *Reader) TwilioMessage(sid string) (Evidence, error) {
	api, err := connectors.NewTwilioAPI(r.TwilioURL, r.TwilioAccountSID, r.TwilioAuthToken, 10*time.Second)
	if err != nil {
		return Evidence{}, fmt.Errorf("error reading Twilio message %s: %w", sid, err)
	}
	msg, err := api.FetchMessage(sid, &twapi.FetchMessageParams{})
	if err != nil {
		return Evidence{}, fmt.Errorf("error reading Twilio message %s: %w", sid, err)
	}
	ev := Evidence{Provider: "twilio", ID: deref(msg.Sid), Status: deref(msg.Status), Detail: map[string]any{
		"to": deref(msg.To), "from": deref(msg.From), "body": deref(msg.Body),
	}}
	if ev.ID != sid {
		return Evidence{}, fmt.Errorf("error reading Twilio message %s: Twilio answered with %q", sid, ev.ID)
	}
	return ev, nil
}

// SESMessage finds a sent email by message ID in the emulator's store.
func (r *Reader) SESMessage(ctx context.Context, messageID string) (Evidence, error) {
	var body struct {
		Emails []map[string]any `json:"emails"`
	}
	if err := r.getJSON(ctx, strings.TrimRight(r.SESStoreURL, "/")+"/store", "", &body); err != nil {
		return Evidence{}, fmt.Errorf("error reading SES store: %w", err)
	}
	for _, e := range body.Emails {
		if e["messageId"] == messageID {
			return Evidence{Provider: "ses", ID: messageID, Status: "stored", Detail: e}, nil
		}
	}
	return Evidence{}, fmt.Errorf("error reading SES store: no email with message ID %s", messageID)
}

// HTTPResource GETs a resource from an HTTP service.
func (r *Reader) HTTPResource(ctx context.Context, baseURL, token, path string) (Evidence, error) {
	var obj map[string]any
	if err := r.getJSON(ctx, strings.TrimRight(baseURL, "/")+path, token, &obj); err != nil {
		return Evidence{}, fmt.Errorf("error reading %s: %w", path, err)
	}
	id, _ := obj["id"].(string)
	status, _ := obj["status"].(string)
	return Evidence{Provider: "http", ID: id, Status: status, Detail: obj}, nil
}

func (r *Reader) getJSON(ctx context.Context, u, token string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := r.httpClient().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	return json.Unmarshal(raw, out)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
