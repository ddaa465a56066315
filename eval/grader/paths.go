package grader

import (
	"fmt"
	"net"
	"net/http"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// Path is one way a call can go: the success path, or one way it can go
// wrong.
type Path string

const (
	// Success: every provider answers as it should. Graded so that a
	// success the agent repeats to a person is proven, not merely not an
	// error.
	Success     Path = "success"
	Unreachable Path = "unreachable"
	Timeout     Path = "timeout"
	Rejected    Path = "4xx"
	Unavailable Path = "5xx"
	AuthFailure Path = "auth failure"
	InvalidArgs Path = "invalid args"
)

// Paths are the success path and every error path, in the order they are
// reported.
var Paths = []Path{Success, Unreachable, Timeout, Rejected, Unavailable, AuthFailure, InvalidArgs}

// Outcome is the status and code an observation must carry.
type Outcome struct {
	Status mt.Status
	Code   mt.Code
}

// expected is what the agent must be told on path p for target t. With
// one part of a composite faulted, the others went out on every path that
// reaches a provider, and the agent hears which (ADR 14).
func (p Path) expectedFor(t Target, performsEffect bool) Outcome {
	if t.OnePart && p != Success && p != InvalidArgs {
		return Outcome{mt.StatusWarning, mt.CodePartlyDelivered}
	}
	return p.expected(performsEffect)
}

// expected is what the agent must be told on path p. A timeout or a 5xx
// leaves an effect's fate unknown (ADR 9): a write may have happened, so
// once reconciliation cannot settle it, it is pending; a read changed
// nothing either way, so it is an error.
func (p Path) expected(performsEffect bool) Outcome {
	switch p {
	case Success:
		return Outcome{Status: mt.StatusSuccess}
	case Timeout, Unavailable:
		if performsEffect {
			return Outcome{mt.StatusPending, mt.CodeOutcomeUnknown}
		}
		return Outcome{mt.StatusError, mt.CodeProviderUnavailable}
	case Rejected:
		return Outcome{mt.StatusError, mt.CodeProviderRejected}
	case AuthFailure:
		return Outcome{mt.StatusError, mt.CodeMisconfigured}
	case InvalidArgs:
		return Outcome{mt.StatusError, mt.CodeInvalidArgs}
	default: // Unreachable: retried, then given up on
		return Outcome{mt.StatusError, mt.CodeProviderUnavailable}
	}
}

// persistent outlasts every attempt the workflow's retry policy allows, so
// a fault that should be retried is still there on the last attempt.
var persistent = int(workflows.ActivityRetry.MaximumAttempts) * 2

// arrangement is what a path may change before a run: the stand-ins'
// faults, the connectors' endpoints and credentials, and the arguments.
type arrangement struct {
	set      *standin.Set
	target   Target
	twilio   *connectors.TwilioConfig
	ses      *connectors.SESConfig
	services map[string]connectors.HTTPService
	args     string
}

func (p Path) arrange(a *arrangement) error {
	add := func(r fault.Rule) error {
		for _, pr := range a.target.Providers {
			if err := pr.faults(a.set).Add(r); err != nil {
				return err
			}
		}
		return nil
	}
	switch p {
	case Success:
		// Nothing to arrange: fresh stand-ins answer as the providers do.
	case Unreachable:
		url, err := closedPort()
		if err != nil {
			return err
		}
		a.pointAt(url)
	case Timeout:
		// Held before the provider acts and past the connector's timeout,
		// on every attempt: the answer never comes, and nothing at the
		// provider says whether the call arrived.
		return add(fault.Rule{Action: fault.Hang, Times: persistent})
	case Rejected:
		return add(fault.Rule{Action: fault.Fail, Status: http.StatusBadRequest, Times: persistent})
	case Unavailable:
		return add(fault.Rule{Action: fault.Fail, Status: http.StatusServiceUnavailable, Times: persistent})
	case AuthFailure:
		// Real credentials, wrong secret: the stand-in refuses them as the
		// provider would, with its own status and error code.
		for _, pr := range a.target.Providers {
			switch pr {
			case Twilio:
				a.twilio.AuthToken = "wrong" + a.twilio.AuthToken
			case SES:
				a.ses.SecretAccessKey = "wrong/" + a.ses.SecretAccessKey
			default:
				for name, svc := range a.services {
					svc.Token = "sk_test_wrong"
					a.services[name] = svc
				}
			}
		}
	case InvalidArgs:
		a.args = a.target.BadArgs
	default:
		return fmt.Errorf("unknown path %q", p)
	}
	return nil
}

// pointAt sends the target's provider traffic to url.
func (a *arrangement) pointAt(url string) {
	for _, pr := range a.target.Providers {
		switch pr {
		case Twilio:
			a.twilio.BaseURL = url
		case SES:
			a.ses.Endpoint = url
		default:
			for name, svc := range a.services {
				svc.BaseURL = url
				a.services[name] = svc
			}
		}
	}
}

// closedPort returns the URL of a loopback port nothing listens on: the
// kernel hands it out, and it is closed again at once.
func closedPort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("error finding a closed port: %w", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", fmt.Errorf("error closing port %s: %w", addr, err)
	}
	return "http://" + addr, nil
}
