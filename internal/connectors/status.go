package connectors

import (
	"strings"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// StatusMeaning is what a status in a provider's 2xx answer says about the
// effect.
type StatusMeaning int

const (
	// StatusAccepted: the provider took the effect on (queued, sent,
	// delivered, open, succeeded …), or the status says nothing either way.
	StatusAccepted StatusMeaning = iota
	// StatusFailed: the provider says the effect failed, whatever else the
	// answer carries.
	StatusFailed
)

// TwilioStatusMeaning maps a Twilio message status. failed, undelivered and
// canceled are final and mean the text did not reach anyone.
func TwilioStatusMeaning(status string) StatusMeaning {
	switch status {
	case "failed", "undelivered", "canceled":
		return StatusFailed
	}
	return StatusAccepted
}

// HTTPStatusMeaning maps the status field of an HTTP service's answer.
// Only "failed" is a failure: "cancelled" is the success of a cancel.
func HTTPStatusMeaning(status string) StatusMeaning {
	if status == "failed" {
		return StatusFailed
	}
	return StatusAccepted
}

// ReceiptStatusMeaning maps a receipt's status by the provider that issued
// it. SES answers SendEmail with a message ID and no status, so its
// receipts are always accepted; bounces arrive later, by notification.
func ReceiptStatusMeaning(r *mt.Receipt) StatusMeaning {
	if r == nil {
		return StatusAccepted
	}
	switch {
	case r.Provider == "twilio", r.Provider == "twilio+ses":
		return TwilioStatusMeaning(r.Status)
	case strings.HasPrefix(r.Provider, "http:"):
		return HTTPStatusMeaning(r.Status)
	}
	return StatusAccepted
}

// failedStatus is the error for a 2xx answer whose status says the effect
// failed; detail is the provider's own explanation, if it gave one.
func failedStatus(provider, id, status, code, detail string) *Error {
	msg := "the provider answered with status " + status + " for " + id
	if detail != "" {
		msg += ": " + detail
	}
	return &Error{Class: ClassFailed, Provider: provider, ProviderCode: code, Message: msg}
}
