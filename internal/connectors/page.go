package connectors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// Page reaches a human on two channels, an SMS and an email, and returns a
// receipt for each. It succeeds only if both providers confirmed. It is a
// Composite: the service sends each part as its own effect (Parts), and
// Do, which sends both at once, remains for callers outside the ledger.
type Page struct {
	SMS   Connector
	Email Connector
}

// Do sends the SMS (settings sms_to, sms_body) and then the email
// (email_to, email_subject, email_body). Each leg gets its own derived
// idempotency key.
func (p Page) Do(ctx context.Context, call Call) (Result, error) {
	sms, err := p.SMS.Do(ctx, smsLeg(call))
	if err != nil {
		return Result{}, err
	}
	email, err := p.Email.Do(ctx, emailLeg(call))
	if err != nil {
		// The SMS went out: this is a partial effect, never a clean failure.
		ce := AsError(err)
		return Result{}, &Error{Class: ClassUnknown, Provider: "page", Message: fmt.Sprintf("SMS %s sent but email failed: %s", sms.Receipt.ID, ce.Error()), Err: err}
	}
	payload, err := json.Marshal(map[string]string{
		"message_sid": sms.Receipt.ID,
		"message_id":  email.Receipt.ID,
	})
	if err != nil {
		return Result{}, fmt.Errorf("error encoding page payload: %w", err)
	}
	return Result{
		Receipt: &maestrotype.Receipt{
			Provider: "twilio+ses",
			ID:       sms.Receipt.ID,
			Status:   sms.Receipt.Status,
			Fields:   map[string]string{maestrotype.ReceiptMessageSID: sms.Receipt.ID, maestrotype.ReceiptMessageID: email.Receipt.ID, maestrotype.ReceiptStatus: sms.Receipt.Status},
			IssuedAt: time.Now().UTC(),
		},
		Payload: payload,
	}, nil
}

// Lookup searches for the page's SMS leg. The email leg is sent only once
// the SMS is confirmed, so a complete search that finds no SMS proves that
// neither leg went out. A found SMS proves only the first leg: the email
// cannot be searched for, so the page needs a human.
func (p Page) Lookup(ctx context.Context, call Call, since time.Time) (Lookup, error) {
	r, ok := p.SMS.(Reconciler)
	if !ok {
		return Lookup{}, fmt.Errorf("%w (the page's SMS connector)", ErrNotSearchable)
	}
	found, err := r.Lookup(ctx, smsLeg(call), since)
	if err != nil {
		return Lookup{}, err
	}
	if len(found.Matches) == 0 {
		return Lookup{Complete: found.Complete}, nil
	}
	sids := make([]string, len(found.Matches))
	for i, m := range found.Matches {
		sids[i] = m.Receipt.ID
	}
	return Lookup{}, fmt.Errorf("%w: the page's SMS went out (%s) but its email cannot be looked up",
		ErrNotSearchable, strings.Join(sids, ", "))
}

// Parts are the page's SMS and email, keyed {key}#sms and {key}#email.
func (p Page) Parts(call Call) []Part {
	return []Part{{Name: "sms", Call: smsLeg(call)}, {Name: "email", Call: emailLeg(call)}}
}

// smsLeg and emailLeg are the page's two provider calls, each with its own
// derived idempotency key.
func smsLeg(call Call) Call {
	return Call{Kind: maestrotype.KindTwilioSMS, IdempotencyKey: partKey(call.IdempotencyKey, "sms"), Settings: map[string]string{
		"to": call.Settings["sms_to"], "body": call.Settings["sms_body"],
	}}
}

func emailLeg(call Call) Call {
	return Call{Kind: maestrotype.KindSESEmail, IdempotencyKey: partKey(call.IdempotencyKey, "email"), Settings: map[string]string{
		"to": call.Settings["email_to"], "subject": call.Settings["email_subject"], "body": call.Settings["email_body"],
	}}
}

// partKey derives a part's key; a call without a key (the crash test's
// control run) sends its parts without one too.
func partKey(key, part string) string {
	if key == "" {
		return ""
	}
	return PartKey(key, part)
}
