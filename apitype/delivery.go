package apitype

import (
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Delivery is the provider's latest word on a message a call sent. A send's
// receipt proves only that the provider accepted the message; Delivery says
// whether it then reached the handset.
type Delivery struct {
	Provider  string           `json:"provider"`
	MessageID string           `json:"message_id"`
	Status    mt.MessageStatus `json:"status"`
	// Final is true once the provider will report nothing that changes the
	// outcome: delivered (or read), undelivered, failed or canceled.
	Final bool `json:"final"`
	// Failed is true when the message will never reach the handset.
	Failed    bool      `json:"failed"`
	Recipient string    `json:"recipient,omitempty"`
	ErrorCode string    `json:"error_code,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// StatusCallbackAck answers a provider's status callback: what maestro did
// with it and the message's status as it now stands.
type StatusCallbackAck struct {
	MessageID string           `json:"message_id"`
	Status    mt.MessageStatus `json:"status"`
	// Outcome is recorded (the first word on the message), advanced,
	// stale (a later status was already known; kept as it was) or replayed
	// (seen before; nothing changed).
	Outcome string `json:"outcome"`
}
