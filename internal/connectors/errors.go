package connectors

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
)

// Class says what a failure proves about the effect. A class is chosen by
// what the answer proves, never by what it suggests: only an answer that
// proves the provider did nothing may lead to the same call being sent
// again as it is. See docs/adr/0009-provider-answers.md for the table.
type Class string

const (
	// ClassUnreachable: the request never reached the provider (the dial
	// failed), so nothing happened and a retry is safe.
	ClassUnreachable Class = "unreachable"
	// ClassAuth: the provider refused our credentials (401/403) before
	// acting.
	ClassAuth Class = "auth"
	// ClassRejected: the provider refused the request as invalid (a 4xx
	// validation error) before acting; retrying the same request cannot
	// succeed.
	ClassRejected Class = "rejected"
	// ClassInvalid: the call could not be built from maestro's own
	// configuration (an HTTP service or connector kind nobody configured,
	// a connector setting that is missing); nothing was sent.
	ClassInvalid Class = "invalid"
	// ClassFailed: the provider answered 2xx with a status that says the
	// effect failed (a Twilio message "failed", an HTTP service's
	// "status":"failed"). It is the provider's own definitive word.
	ClassFailed Class = "failed"
	// ClassUnknown: the request may have reached the provider and nothing
	// in the answer proves what it did: a 5xx, a 408 or 429, a timeout or
	// reset after the request was written, an unparsable 2xx or one without
	// a receipt. The effect may or may not have happened; it is reconciled
	// before anything is sent again.
	ClassUnknown Class = "unknown"
)

// Error is a classified provider failure.
type Error struct {
	Class        Class
	Provider     string
	HTTPStatus   int
	ProviderCode string
	Message      string
	Err          error
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("%s %s (HTTP %d %s): %s", e.Provider, e.Class, e.HTTPStatus, e.ProviderCode, msg)
	}
	return fmt.Sprintf("%s %s: %s", e.Provider, e.Class, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the same call may be sent again as it is,
// without consulting the provider, because the answer proves nothing
// happened.
func (e *Error) Retryable() bool {
	return e.Class == ClassUnreachable
}

// Misconfigured reports whether the failure is maestro's own doing rather
// than the call's: the provider refused maestro's credentials, or maestro
// has no configuration to send the call with. No change of arguments can
// make such a call succeed.
func (e *Error) Misconfigured() bool {
	return e.Class == ClassAuth || e.Class == ClassInvalid
}

// AsError extracts a classified error, treating anything unclassified as an
// unknown outcome: claiming less than we know is the safe direction.
func AsError(err error) *Error {
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	return &Error{Class: ClassUnknown, Message: err.Error(), Err: err}
}

// classifyTransport decides what a transport-level error says about the
// effect. Only a failed dial proves the request never left.
func classifyTransport(provider string, err error) *Error {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return &Error{Class: ClassUnreachable, Provider: provider, Message: "provider unreachable: " + opErr.Err.Error(), Err: err}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return &Error{Class: ClassUnreachable, Provider: provider, Message: "provider host not found: " + dnsErr.Error(), Err: err}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Class: ClassUnknown, Provider: provider, Message: "call cancelled while in flight", Err: err}
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) && urlErr.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Class: ClassUnknown, Provider: provider, Message: "provider did not answer in time", Err: err}
	}
	return &Error{Class: ClassUnknown, Provider: provider, Message: err.Error(), Err: err}
}

// classifyStatus maps a provider's non-2xx HTTP status to what it proves.
// Only a refusal the provider documents as made before acting proves
// nothing happened: 401/403 and 4xx validation errors. A 408 or 429 is not
// trusted as "not processed" even where a provider documents it so: an
// answer lost or rewritten on its way (a proxy, a load balancer) looks the
// same, and reconciling costs little where resending could double an
// effect.
func classifyStatus(status int) Class {
	switch {
	case status == 401 || status == 403:
		return ClassAuth
	case status == 408 || status == 429 || status >= 500:
		return ClassUnknown
	case status >= 400:
		return ClassRejected
	default:
		// A redirect or other answer outside the API's contract.
		return ClassUnknown
	}
}
