// Package standin runs local stand-ins for maestro's providers (Twilio's
// Messages API, SES v2 and a back-office HTTP API) on loopback. They speak
// the providers' wire protocols, keep state, and are read back through
// their own APIs.
package standin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/standin/sandbox"
	"github.com/maestro-run/maestro/internal/standin/ses"
	"github.com/maestro-run/maestro/internal/standin/twilio"
	"github.com/maestro-run/maestro/receipts/readback"
)

// The senders maestro uses against the stand-ins.
const (
	TwilioFrom = "+15550009999"
	SESFrom    = "maestro@demo-properties.example"
	// SandboxService is the HTTP service name the demo catalog calls.
	SandboxService = "sandbox"
)

// Set is the three stand-ins, each on its own loopback port.
type Set struct {
	Twilio  *twilio.Server
	SES     *ses.Server
	Sandbox *sandbox.Server

	twilioURL, sesURL, sandboxURL string
	servers                       []*http.Server
}

// Options configures the stand-ins a Set starts.
type Options struct {
	// Twilio configures the Twilio stand-in (a trial account, say).
	// Optional: default twilio.Options{}.
	Twilio twilio.Options
}

// Start serves the stand-ins on ephemeral loopback ports.
func Start() (*Set, error) {
	return StartWith(Options{})
}

// StartWith serves stand-ins configured by opts on ephemeral loopback
// ports.
func StartWith(opts Options) (*Set, error) {
	tw, err := twilio.New(opts.Twilio)
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		return nil, err
	}
	s := &Set{Twilio: tw, SES: ses.New(ses.Options{}), Sandbox: sb}
	for _, h := range []struct {
		handler http.Handler
		url     *string
	}{{s.Twilio, &s.twilioURL}, {s.SES, &s.sesURL}, {s.Sandbox, &s.sandboxURL}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("error listening for a stand-in: %w", err)
		}
		srv := &http.Server{Handler: h.handler, ReadHeaderTimeout: 5 * time.Second}
		s.servers = append(s.servers, srv)
		*h.url = "http://" + ln.Addr().String()
		go func() { _ = srv.Serve(ln) }()
	}
	return s, nil
}

// TwilioURL, SESURL and SandboxURL are the stand-ins' base URLs.
func (s *Set) TwilioURL() string  { return s.twilioURL }
func (s *Set) SESURL() string     { return s.sesURL }
func (s *Set) SandboxURL() string { return s.sandboxURL }

// TwilioConfig points the real Twilio connector at the stand-in.
func (s *Set) TwilioConfig() connectors.TwilioConfig {
	return connectors.TwilioConfig{
		BaseURL:    s.twilioURL,
		AccountSID: s.Twilio.AccountSID(),
		AuthToken:  s.Twilio.AuthToken(),
		From:       TwilioFrom,
	}
}

// SESConfig points the real SES connector at the stand-in.
func (s *Set) SESConfig() connectors.SESConfig {
	return connectors.SESConfig{
		Endpoint:        s.sesURL,
		Region:          "us-east-1",
		AccessKeyID:     s.SES.AccessKeyID(),
		SecretAccessKey: s.SES.SecretAccessKey(),
		From:            SESFrom,
	}
}

// HTTPServices names the sandbox for the generic HTTP connector.
func (s *Set) HTTPServices() map[string]connectors.HTTPService {
	return map[string]connectors.HTTPService{
		SandboxService: {BaseURL: s.sandboxURL, Token: s.Sandbox.Token()},
	}
}

// Close stops the stand-ins.
func (s *Set) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Release held requests first, or a hung fault would hold shutdown.
	s.Twilio.Faults().Reset()
	s.SES.Faults().Reset()
	s.Sandbox.Faults().Reset()
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// Reader reads effects back from the stand-ins through their own APIs.
func (s *Set) Reader() *readback.Reader {
	return &readback.Reader{
		TwilioURL:        s.twilioURL,
		TwilioAccountSID: s.Twilio.AccountSID(),
		TwilioAuthToken:  s.Twilio.AuthToken(),
		SESStoreURL:      s.sesURL,
	}
}
