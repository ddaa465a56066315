package connectors

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// Page reaches a human on two channels, an SMS and an email, and returns a
// receipt for each. It succeeds only if both providers confirmed.
type Page struct {
	SMS   Connector
	Email Connector
}

// Do sends the SMS (settings sms_to, sms_body) and then the email
// (email_to, email_subject, email_body). Each leg gets its own derived
// idempotency key.
func (p Page) Do(ctx context.Context, call Call) (Result, error) {
	sms, err := p.SMS.Do(ctx, Call{Kind: KindTwilioSMS, IdempotencyKey: call.IdempotencyKey + ":sms", Settings: map[string]string{
		"to": call.Settings["sms_to"], "body": call.Settings["sms_body"],
	}})
	if err != nil {
		return Result{}, err
	}
	email, err := p.Email.Do(ctx, Call{Kind: KindSESEmail, IdempotencyKey: call.IdempotencyKey + ":email", Settings: map[string]string{
		"to": call.Settings["email_to"], "subject": call.Settings["email_subject"], "body": call.Settings["email_body"],
	}})
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
			Fields:   map[string]string{"message_sid": sms.Receipt.ID, "message_id": email.Receipt.ID, "status": sms.Receipt.Status},
			IssuedAt: time.Now().UTC(),
		},
		Payload: payload,
	}, nil
}
