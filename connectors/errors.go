package connectors

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
)

// Class says what a failure means for the effect.
type Class string

const (
	// ClassUnreachable: the request never reached the provider, so nothing
	// happened and a retry is safe.
	ClassUnreachable Class = "unreachable"
	// ClassUnavailable: the provider answered 5xx or 429; it did not perform
	// the effect and asks to be retried later.
	ClassUnavailable Class = "unavailable"
	// ClassAuth: the provider refused our credentials.
	ClassAuth Class = "auth"
	// ClassRejected: the provider refused the request (4xx); retrying the
	// same request cannot succeed.
	ClassRejected Class = "rejected"
	// ClassInvalid: the call could not be built; nothing was sent.
	ClassInvalid Class = "invalid"
	// ClassUnknown: the request may have reached the provider but no answer
	// came back (timeout, reset). The effect may or may not have happened.
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

// Retryable reports whether the same call may be sent again without risking
// a duplicate effect.
func (e *Error) Retryable() bool {
	return e.Class == ClassUnreachable || e.Class == ClassUnavailable
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

// classifyStatus maps a provider HTTP status to a class.
func classifyStatus(status int) Class {
	switch {
	case status == 401 || status == 403:
		return ClassAuth
	case status == 429 || status >= 500:
		return ClassUnavailable
	default:
		return ClassRejected
	}
}
